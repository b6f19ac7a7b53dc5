import type { EmulatorHandle } from "./emulator";

// What the service holds after a run, in a form two runs of the same
// declaration share: ids, times and secrets left out, lists in a fixed order.
// Two ways of declaring a tenant (the plugin's SDK or component, the dynamic
// resources) must leave the same.

/** The service's generated ids: a kind and hex (`org_93f6e556…`), or a UUID (users). Prices keep their names. */
const ID = /^[a-z]+_[0-9a-f]{12,}$|^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** An id inside a text, such as the report address of a record. */
const ID_IN_TEXT = /\b[a-z]+_[0-9a-f]{12,}\b/g;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** The service's objects with ids, times and secrets left out, lists in a fixed order: what two runs can share. */
function shapeOf(value: unknown): unknown {
  if (typeof value === "string")
    return ID.test(value) ? "<id>" : TIME.test(value) ? "<time>" : value.replace(ID_IN_TEXT, "<id>");
  if (Array.isArray(value))
    return value.map(shapeOf).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "secret")
      .map(([key, field]) => [ID.test(key) ? "<id>" : key, shapeOf(field)]),
  );
}

export async function serviceShape(emulator: EmulatorHandle): Promise<unknown> {
  const state = await emulator.control<Record<string, unknown>>("GET", "/state");
  const { organizations, domainGroups, domains, webhooks, subscriptions, users, dnsRecords } = state;
  return shapeOf({ organizations, domainGroups, domains, webhooks, subscriptions, users, dnsRecords });
}
