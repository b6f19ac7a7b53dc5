import { z } from "zod";
import { listOf } from "./common";

export const DOMAIN_GROUP_NAME_MAX = 128;

export const DomainGroupName = z
  .string()
  .min(1, { message: "must not be empty" })
  .max(DOMAIN_GROUP_NAME_MAX, { message: `must be at most ${DOMAIN_GROUP_NAME_MAX} characters` });

export const CreateDomainGroupRequest = z.object({
  organizationId: z.string().min(1),
  name: DomainGroupName,
});
export type CreateDomainGroupRequest = z.infer<typeof CreateDomainGroupRequest>;

export const UpdateDomainGroupRequest = z.object({ name: DomainGroupName });
export type UpdateDomainGroupRequest = z.infer<typeof UpdateDomainGroupRequest>;

export const DomainGroup = z.object({
  id: z.string().min(1),
  name: z.string(),
  domains: z.array(z.string()).optional(),
});
export type DomainGroup = z.infer<typeof DomainGroup>;

export const DomainGroupList = listOf(DomainGroup);
