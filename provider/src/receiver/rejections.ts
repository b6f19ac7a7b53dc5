import type { ErrorEnvelope } from "../api";

// One table so a reason always answers with the same status and text, whether
// it comes from the verifier, the receiver or the node:http layer. Messages are
// fixed strings: nothing from the request or the secret can end up in them.
const REJECTIONS = {
  method_not_allowed: { status: 405, message: "webhook deliveries are POST requests" },
  not_found: { status: 404, message: "no webhook receiver at this path" },
  payload_too_large: { status: 413, message: "the body exceeds the receiver's size limit" },
  missing_headers: {
    status: 400,
    message: "webhook-id, webhook-timestamp and webhook-signature headers are required, once each",
  },
  invalid_timestamp: { status: 400, message: "webhook-timestamp must be whole seconds since the Unix epoch" },
  invalid_signature: { status: 401, message: "no webhook-signature matches the body with this webhook's secret" },
  timestamp_too_old: { status: 401, message: "webhook-timestamp is older than the receiver's tolerance" },
  timestamp_too_new: {
    status: 401,
    message: "webhook-timestamp is further in the future than the receiver's tolerance",
  },
  malformed_json: { status: 400, message: "the body is not valid JSON" },
  unknown_event: { status: 400, message: "metadata.eventName is not an event this receiver knows" },
  invalid_payload: { status: 400, message: "the body does not match the event's schema" },
  in_progress: {
    status: 409,
    message: "a delivery with this webhook-id is still being processed; retry later",
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type RejectionReason = keyof typeof REJECTIONS;

/** A request the receiver refused, with the answer to send. */
export interface Rejected {
  outcome: "rejected";
  reason: RejectionReason;
  /** HTTP status to answer with. */
  status: number;
  /** Small JSON body to answer with, in the service's error envelope shape. */
  body: ErrorEnvelope;
}

/** `detail` must never carry request or secret material; it names schema paths at most. */
export function reject(reason: RejectionReason, detail?: string): Rejected {
  const { status, message } = REJECTIONS[reason];
  return {
    outcome: "rejected",
    reason,
    status,
    body: { error: reason, message: detail ? `${message}: ${detail}` : message },
  };
}
