import { z } from "zod";
import { DomainType } from "./domains";
import type { EventName } from "./webhooks";

/**
 * `domain.verified`'s status as sent: the description's example says
 * `"verified"`, the guides show `"failed"`, this project's emulator once sent
 * `"success"`. Any text is accepted, so a new word is reported, never refused;
 * {@link verificationOutcome} tells what it means.
 */
export const VerificationStatus = z.string().min(1);
export type VerificationStatus = z.infer<typeof VerificationStatus>;

export type VerificationOutcome = "verified" | "failed" | "unknown";

const VERIFICATION_OUTCOMES: Record<string, VerificationOutcome> = {
  verified: "verified",
  success: "verified",
  succeeded: "verified",
  passed: "verified",
  failed: "failed",
  failure: "failed",
  error: "failed",
};

/** What a `domain.verified` status means; `unknown` for a word neither source uses. */
export function verificationOutcome(status: string): VerificationOutcome {
  return VERIFICATION_OUTCOMES[status.toLowerCase()] ?? "unknown";
}

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
