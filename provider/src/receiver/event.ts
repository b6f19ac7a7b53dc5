import type { z } from "zod";
import { DomainCreatedEvent, DomainVerifiedEvent, EventName, ReportReceivedEvent, WebhookEvent } from "../api";
import { type Rejected, reject } from "./rejections";

// Used only to explain a failure: a union's own error does not say which field of which event was wrong.
const schemaByName = {
  "domain.created": DomainCreatedEvent,
  "domain.verified": DomainVerifiedEvent,
  "report.received": ReportReceivedEvent,
} satisfies Record<EventName, z.ZodType>;

/** Paths a rejection names; the rest are counted, so the sender knows there is more to fix. */
const MAX_LISTED_PATHS = 5;

/** The body as a typed event, or why it is not one. */
export function parseEvent(payload: string): { outcome: "parsed"; event: WebhookEvent } | Rejected {
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    return reject("malformed_json");
  }
  const parsed = WebhookEvent.safeParse(json);
  if (parsed.success) return { outcome: "parsed", event: parsed.data };

  const eventName = (json as { metadata?: { eventName?: unknown } } | null)?.metadata?.eventName;
  const known = EventName.safeParse(eventName);
  if (!known.success) {
    return typeof eventName === "string"
      ? reject("unknown_event")
      : reject("invalid_payload", "check metadata.eventName");
  }
  const issues = schemaByName[known.data].safeParse(json).error?.issues ?? [];
  return reject("invalid_payload", describeIssues(issues));
}

// Paths only, never values: the message goes back to the sender and into its delivery log.
function describeIssues(issues: readonly { path: readonly PropertyKey[] }[]): string {
  const paths = [...new Set(issues.map((issue) => issue.path.map(String).join(".") || "(root)"))];
  const more = paths.length - MAX_LISTED_PATHS;
  return `check ${paths.slice(0, MAX_LISTED_PATHS).join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}
