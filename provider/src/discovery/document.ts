import { Document, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from "yaml";
import type { TenantEntry } from "./entries";

// The inventory text the import writes: a new file, or the partner's file
// with the new tenants added after its last one. An existing file is kept as
// it is, byte for byte, where that can be done by inserting lines; the
// result is parsed again and must hold the old tenants and the new ones.

/** A tenant to write, with the comment lines that go above its entry. */
interface WrittenTenant {
  entry: TenantEntry;
  comments: readonly string[];
}

/** What the import adds to an inventory. */
export interface InventoryAdditions {
  tenants: readonly WrittenTenant[];
  /** Comment lines after the tenants: organisations with no entry, and what of the account no entry can hold. */
  trailing: readonly string[];
}

/** Above each webhook: the service shows a secret only when it makes the webhook. */
const WEBHOOK_SECRET_NOTE =
  "secret: the service shows it only when it makes the webhook; rotate it to get one (guide: Import and drift)";

const HEADER = [
  " Tenants of the partner's account, written by `dmarc-fleet import`. Each entry adopts",
  " its organisation's objects through ids: (`dmarc-fleet up` creates and changes nothing);",
  ' a "left out:" line says what an entry does not hold, and why.',
].join("\n");

const commentText = (lines: readonly string[]) => lines.map((line) => ` ${line}`).join("\n");

/** One tenant's entry; `apart`: a blank line before it. */
function tenantNode(document: Document, tenant: WrittenTenant, apart: boolean) {
  const node = document.createNode(tenant.entry) as YAMLMap;
  node.spaceBefore = apart;
  if (tenant.comments.length > 0) node.commentBefore = commentText(tenant.comments);
  const webhooks = node.get("webhooks", true) as YAMLSeq<YAMLMap> | undefined;
  for (const webhook of webhooks?.items ?? []) {
    webhook.commentBefore = commentText([WEBHOOK_SECRET_NOTE]);
    const events = webhook.get("events", true) as YAMLSeq | undefined;
    if (events) events.flow = true;
  }
  return node;
}

/** A new inventory file holding the additions. */
export function newInventoryText(additions: InventoryAdditions): string {
  const document = new Document({ tenants: [] });
  const tenants = document.get("tenants", true) as YAMLSeq;
  tenants.items.push(...additions.tenants.map((tenant, index) => tenantNode(document, tenant, index > 0)));
  if (additions.tenants.length === 0) tenants.flow = true;
  document.commentBefore = HEADER;
  if (additions.trailing.length > 0) document.comment = commentText(additions.trailing);
  return withoutTrailingSpaces(document.toString());
}

/** A new file's closing comment lines, at the end of its text as {@link newInventoryText} writes them. */
export function withClosingComments(text: string, lines: readonly string[]): string {
  if (lines.length === 0) return text;
  return `${text.trimEnd()}\n\n${lines.map((line) => `# ${line}`).join("\n")}\n`;
}

/** The library indents the blank line before a spaced-out item; the file is kept free of trailing white space. */
function withoutTrailingSpaces(text: string): string {
  return text.replace(/[ ]+$/gm, "");
}

/** The new tenants as block sequence items at `indent`, with the trailing comment lines after them. */
function itemsText(additions: InventoryAdditions, trailing: readonly string[], indent: number): string {
  const document = new Document([]);
  const items = document.contents as YAMLSeq;
  items.items.push(...additions.tenants.map((tenant) => tenantNode(document, tenant, true)));
  const text = [
    ...(additions.tenants.length > 0 ? withoutTrailingSpaces(document.toString()).trimEnd().split("\n") : []),
    ...trailing.map((line) => `# ${line}`),
  ];
  return text.map((line) => (line === "" ? "\n" : `${" ".repeat(indent)}${line}\n`)).join("");
}

/** Tenants the file holds, as data, for checking a rewrite. */
function tenantsOf(text: string): unknown[] {
  const tenants = (parseDocument(text).toJS() as { tenants?: unknown } | null)?.tenants;
  return Array.isArray(tenants) ? tenants : [];
}

/**
 * The inventory with the additions after its last tenant; undefined when
 * there is nothing to add. Trailing lines the file holds already are not
 * written again, so a rerun that finds nothing new leaves the file alone.
 */
export function appendedInventoryText(existing: string, additions: InventoryAdditions): string | undefined {
  const present = new Set(existing.split("\n").map((line) => line.trim()));
  const trailing = additions.trailing.filter((line) => !present.has(`# ${line}`));
  if (additions.tenants.length === 0 && trailing.length === 0) return undefined;
  const expected = JSON.stringify([...tenantsOf(existing), ...additions.tenants.map((tenant) => tenant.entry)]);
  const inserted = insertAfterLastTenant(existing, additions, trailing);
  if (inserted !== undefined && JSON.stringify(tenantsOf(inserted)) === expected) return inserted;
  // A file whose tenants are not a block list (none yet, `tenants: []`): written out again, comments kept.
  const document = parseDocument(existing);
  let tenants = document.get("tenants", true);
  if (!isSeq(tenants)) {
    tenants = document.createNode([]) as YAMLSeq;
    document.set("tenants", tenants);
  }
  const seq = tenants as YAMLSeq;
  seq.flow = false;
  seq.items.push(...additions.tenants.map((tenant, index) => tenantNode(document, tenant, index > 0)));
  if (trailing.length > 0) document.comment = [document.comment, commentText(trailing)].filter(Boolean).join("\n");
  const rewritten = document.toString();
  if (JSON.stringify(tenantsOf(rewritten)) !== expected) {
    throw new Error("the inventory could not be written with the new tenants added: its tenants would change");
  }
  return rewritten;
}

/** The text with the additions inserted as lines after the last item of a block `tenants:` list. */
function insertAfterLastTenant(
  existing: string,
  additions: InventoryAdditions,
  trailing: readonly string[],
): string | undefined {
  const tenants = parseDocument(existing).get("tenants", true);
  if (!isSeq(tenants) || tenants.flow || tenants.items.length === 0 || !tenants.range) return undefined;
  const [start, , end] = tenants.range;
  const indent = start - (existing.lastIndexOf("\n", start - 1) + 1);
  const before = existing.slice(0, end);
  const separated = before.endsWith("\n") ? before : `${before}\n`;
  return `${separated}${itemsText(additions, trailing, indent)}${existing.slice(end)}`;
}
