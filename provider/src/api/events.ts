import { z } from "zod";
import { DomainType } from "./domains";
import type { EventName } from "./webhooks";

export const VerificationStatus = z.enum(["success", "failed"]);
export type VerificationStatus = z.infer<typeof VerificationStatus>;

export const DomainCreatedData = z.object({
  domain: z.string(),
  organizationId: z.string(),
  type: DomainType,
  groupId: z.string().nullable().optional(),
});

export const DomainVerifiedData = z.object({
  domain: z.string(),
  verificationStatus: VerificationStatus,
  reason: z.string().optional(),
});

export const ReportReceivedData = z.object({
  domain: z.string(),
  organizationId: z.string(),
  reportId: z.string(),
  reporter: z.string(),
  begin: z.string(),
  end: z.string(),
  messageCount: z.number().int().nonnegative(),
});

const metadataFor = <T extends z.infer<typeof EventName>>(eventName: T) =>
  z.object({ eventName: z.literal(eventName), ownerId: z.string() });

export const DomainCreatedEvent = z.object({ data: DomainCreatedData, metadata: metadataFor("domain.created") });
export const DomainVerifiedEvent = z.object({ data: DomainVerifiedData, metadata: metadataFor("domain.verified") });
export const ReportReceivedEvent = z.object({ data: ReportReceivedData, metadata: metadataFor("report.received") });

/** Every event body the service signs and delivers, told apart by `metadata.eventName`. */
export const WebhookEvent = z.union([DomainCreatedEvent, DomainVerifiedEvent, ReportReceivedEvent]);
export type WebhookEvent = z.infer<typeof WebhookEvent>;
export type DomainCreatedEvent = z.infer<typeof DomainCreatedEvent>;
export type DomainVerifiedEvent = z.infer<typeof DomainVerifiedEvent>;
export type ReportReceivedEvent = z.infer<typeof ReportReceivedEvent>;
