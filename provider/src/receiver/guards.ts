import type { EventName, WebhookEvent } from "../api";

/** The member of WebhookEvent whose `metadata.eventName` is `N`. */
export type EventOf<N extends EventName> = Extract<WebhookEvent, { metadata: { eventName: N } }>;

/**
 * Narrows an event by name. Needed because TypeScript does not narrow a union on a nested
 * discriminant: checking `event.metadata.eventName` alone leaves `event.data` as the union of all three.
 */
export function isEvent<N extends EventName>(event: WebhookEvent, name: N): event is EventOf<N> {
  return event.metadata.eventName === name;
}
