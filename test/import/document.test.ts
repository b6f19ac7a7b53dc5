import { parseInventory } from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";
import {
  appendedInventoryText,
  type InventoryAdditions,
  newInventoryText,
} from "../../provider/src/discovery/document";
import type { TenantEntry } from "../../provider/src/discovery/entries";

// The inventory the import writes is one a partner keeps: a new file reads
// back as the entries given, and a partner's own file keeps every byte it
// had when tenants are added to it.

function entry(key: string): TenantEntry {
  const organization = `org_${key}`;
  return {
    name: `Tenant ${key}`,
    key,
    group: "Main",
    plan: "Starter",
    frequency: "yearly",
    currency: "USD",
    onDelete: "keep",
    domains: [{ name: `${key}.example` }, { name: `old.${key}.example`, type: "parked" }],
    webhooks: [{ name: "events", url: `https://hooks.${key}.example/dmarc`, events: ["domain.verified"] }],
    ids: {
      organization,
      group: `${organization}/dmngrp_1`,
      subscription: `${organization}/sub_1`,
      domains: { [`${key}.example`]: `${organization}/${key}.example` },
      webhooks: { events: `wh_${key}` },
    },
  };
}

const additions = (keys: string[], trailing: string[] = []): InventoryAdditions => ({
  tenants: keys.map((key) => ({ entry: entry(key), comments: [`left out: something of ${key}`] })),
  trailing,
});

const PARTNERS_FILE = `# Our customers. Reviewed by the platform team.
defaults:
  plan:   Starter      # the cheap one
  frequency: yearly

tenants:
    - name: Hand Written
      key: hand-written
      group: Main
      # nobody remembers why
      domains: [{ name: hand.example }]
`;

describe("the inventory text", () => {
  it("writes a new file that reads back as the entries, with the comments above them", () => {
    const text = newInventoryText(additions(["alpha", "bravo"], ["left out: organisation X"]));
    const { tenants } = parseInventory(text);
    expect(tenants.map((tenant) => tenant.key)).toEqual(["alpha", "bravo"]);
    expect(tenants[0]?.domains.map((domain) => [domain.name, domain.type])).toEqual([
      ["alpha.example", "sending"],
      ["old.alpha.example", "parked"],
    ]);
    expect(text).toContain("  # left out: something of alpha\n  - name: Tenant alpha\n");
    expect(text).toContain("      # secret: the service shows it only when it makes the webhook");
    expect(text).toMatch(/\n# left out: organisation X\n$/);
    expect(text).not.toMatch(/[ \t]$/m);
  });

  it("adds to a partner's file after its last tenant, keeping every byte it had", () => {
    const text = appendedInventoryText(PARTNERS_FILE, additions(["charlie"], ["left out: organisation Y"]));
    expect(text?.startsWith(PARTNERS_FILE)).toBe(true);
    expect(text?.slice(PARTNERS_FILE.length)).toMatch(
      /^\n {4}# left out: something of charlie\n {4}- name: Tenant charlie\n/,
    );
    expect(parseInventory(text ?? "").tenants.map((tenant) => tenant.key)).toEqual(["hand-written", "charlie"]);

    // Nothing new, and the trailing line is there already: the file is left alone.
    expect(appendedInventoryText(text ?? "", additions([], ["left out: organisation Y"]))).toBeUndefined();
  });

  it("writes tenants into a file whose list is empty, keeping its comments", () => {
    const text = appendedInventoryText("# none yet\ntenants: []  # fill me\n", additions(["delta"]));
    expect(text).toContain("# none yet");
    expect(parseInventory(text ?? "").tenants.map((tenant) => tenant.key)).toEqual(["delta"]);
  });
});
