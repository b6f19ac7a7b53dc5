import { z } from "zod";
import { listOf } from "./common";
import { DomainName } from "./validation";

export const DomainType = z.enum(["sending", "parked"]);
export type DomainType = z.infer<typeof DomainType>;

export const DomainPolicy = z.enum(["none", "quarantine", "reject", "missing", "invalid"]);
export type DomainPolicy = z.infer<typeof DomainPolicy>;

export const CreateDomainRequest = z.object({
  organizationId: z.string().min(1),
  domain: DomainName,
  type: DomainType,
  groupId: z.string().min(1),
});
export type CreateDomainRequest = z.infer<typeof CreateDomainRequest>;

export const UpdateDomainRequest = z
  .object({ type: DomainType.optional(), groupId: z.string().min(1).optional() })
  .refine((body) => body.type !== undefined || body.groupId !== undefined, {
    message: "at least one of type or groupId is required",
  });
export type UpdateDomainRequest = z.infer<typeof UpdateDomainRequest>;

export const Domain = z.object({
  domain: z.string().min(1),
  type: DomainType,
  policy: DomainPolicy,
  domainVerified: z.boolean(),
  domainGroup: z.string().nullable().optional(),
  domainGroupId: z.string().nullable().optional(),
});
export type Domain = z.infer<typeof Domain>;

export const DomainList = listOf(Domain);

/** `POST /v1/domains/batch`: one organisation's domains in one call. */
export const CreateDomainsBatchRequest = z.object({
  organizationId: z.string().min(1),
  domains: z
    .array(z.object({ domainName: DomainName, type: DomainType, groupId: z.string().min(1) }))
    .min(1, { message: "must list at least one domain" }),
});
export type CreateDomainsBatchRequest = z.infer<typeof CreateDomainsBatchRequest>;

/**
 * The batch's answer: an array of Domain in the description's schema, an
 * array of `{ domains: [Domain] }` in its example. Read as the domains either way.
 */
export const CreatedDomains = z
  .union([z.array(Domain), z.array(z.object({ domains: z.array(Domain) }))])
  .transform((answer) => answer.flatMap((entry) => ("domains" in entry ? entry.domains : [entry])));

/** The setup call takes the record type in upper case and answers it in lower case. */
export const SetupRecordType = z.enum(["TXT", "CNAME"]);
export type SetupRecordType = z.infer<typeof SetupRecordType>;

export const SetupRecordQuery = z.object({
  type: SetupRecordType,
  organizationId: z.string().min(1),
});
export type SetupRecordQuery = z.infer<typeof SetupRecordQuery>;

export const SetupRecord = z.object({
  host: z.string().min(1),
  type: z.enum(["txt", "cname"]),
  value: z.string().min(1),
});
export type SetupRecord = z.infer<typeof SetupRecord>;
