import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { dynamicProviderHost as host } from "pulumi-dmarc-partner";
import { createClient, type DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { UNKNOWN } from "../../provider/src/runtime/values";
import { badInputs } from "../support/badInputs";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";

// The provider functions each resource's serialized shim calls, driven
// directly against an in-process emulator: every diff decision, and create,
// read, update and delete with their edge cases.

let handle: EmulatorHandle;
let client: DmarcClient;

type Props = Record<string, unknown>;

/** The group id part of a DomainGroup resource id, `<organizationId>/<groupId>`. */
const groupIdOf = (resourceId: string) => resourceId.split("/")[1] as string;

function configure(values: Record<string, string>) {
  return host.configure({
    config: {
      get: (key: string) => values[key],
      require: (key: string) => {
        const value = values[key];
        if (value === undefined) throw new Error(`missing ${key}`);
        return value;
      },
    },
  });
}

async function checked(typeName: string, news: Props): Promise<Props> {
  const result = await host.check(typeName, {}, news);
  expect(result.failures ?? []).toEqual([]);
  return result.inputs as Props;
}

async function created(typeName: string, news: Props): Promise<{ id: string; outs: Props }> {
  const inputs = await checked(typeName, news);
  const result = await host.create(typeName, inputs);
  return { id: result.id, outs: result.outs as Props };
}

const requestLog = join(mkdtempSync(join(tmpdir(), "dmarc-provider-")), "requests.jsonl");

/** The group's deletes the service refused (409), from its request log. */
function refusedGroupDeletes(groupId: string): number {
  return readFileSync(requestLog, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { method: string; path: string; status: number | null })
    .filter((entry) => entry.method === "DELETE" && entry.path.includes(groupId) && entry.status === 409).length;
}

beforeAll(async () => {
  handle = await startTestEmulator({ requestLogFile: requestLog });
  client = createClient({
    baseUrl: handle.emulator.url,
    clientId: handle.partner.clientId,
    clientSecret: handle.partner.clientSecret,
  });
});

afterAll(async () => {
  await handle?.emulator.close();
});

beforeEach(async () => {
  await handle.control("POST", "/reset");
  await configure({
    "dmarc:baseUrl": handle.emulator.url,
    "dmarc:clientId": handle.partner.clientId,
    "dmarc:clientSecret": handle.partner.clientSecret,
    "dmarc:partnerId": handle.partner.id,
  });
});

describe("check", () => {
  it.each(badInputs)("refuses bad %s input %j at %s", async (typeName, news, field, expected) => {
    const before = await handle.control<{ requests: number }>("GET", "/stats");
    const result = await host.check(typeName, {}, news);
    const failure = result.failures?.find((candidate) => candidate.reason.includes(`input "${field}"`));
    expect(failure, JSON.stringify(result.failures)).toBeDefined();
    expect(failure?.reason).toContain(`${typeName} input "${field}"`);
    expect(failure?.reason).toContain(expected);
    expect(failure?.reason).toContain("got ");
    const after = await handle.control<{ requests: number }>("GET", "/stats");
    expect(after.requests).toBe(before.requests);
  });

  it("applies defaults and the partner id as the default webhook owner", async () => {
    const inputs = await checked("Webhook", {
      name: "w",
      url: "https://hooks.example.com/dmarc",
      events: ["domain.verified"],
    });
    expect(inputs).toMatchObject({ active: true, ownerId: handle.partner.id, secretVersion: 0 });
    const domain = await checked("Domain", { organizationId: "org_1", domain: "a.example", groupId: "g" });
    expect(domain).toMatchObject({ type: "sending", setupRecordType: "TXT" });
  });

  it("lets values unknown during preview through and still checks the known ones", async () => {
    const pending = await host.check("Domain", {}, { organizationId: UNKNOWN, domain: "a.example", groupId: UNKNOWN });
    expect(pending.failures ?? []).toEqual([]);
    const bad = await host.check("Domain", {}, { organizationId: UNKNOWN, domain: "A.example", groupId: UNKNOWN });
    expect(bad.failures?.map((failure) => failure.property)).toEqual(["domain"]);
  });

  it("fails with the exact key to set when the base address is missing", async () => {
    await configure({ "dmarc:clientId": "x", "dmarc:clientSecret": "y" });
    const saved = process.env.DMARC_BASE_URL;
    delete process.env.DMARC_BASE_URL;
    try {
      await expect(host.check("Organization", {}, { name: "x" })).rejects.toThrow(/dmarc:baseUrl.*DMARC_BASE_URL/);
    } finally {
      if (saved !== undefined) process.env.DMARC_BASE_URL = saved;
    }
  });

  it("refuses a token and client credentials together, naming the keys and variables", async () => {
    await configure({
      "dmarc:baseUrl": handle.emulator.url,
      "dmarc:accessToken": "static-token-value",
      "dmarc:clientId": handle.partner.clientId,
    });
    const refusal = host.check("Organization", {}, { name: "x" });
    await expect(refusal).rejects.toThrow(/dmarc:accessToken \(environment variable DMARC_ACCESS_TOKEN\)/);
    await expect(refusal).rejects.toThrow(/not both/);
    await expect(refusal).rejects.not.toThrow(/static-token-value/);
  });

  it("names the dmarc: key and its environment variable for a bad number", async () => {
    await configure({
      "dmarc:baseUrl": handle.emulator.url,
      "dmarc:clientId": handle.partner.clientId,
      "dmarc:clientSecret": handle.partner.clientSecret,
      "dmarc:maxAttempts": "1.5",
    });
    await expect(host.check("Organization", {}, { name: "x" })).rejects.toThrow(
      /dmarc:maxAttempts \(environment variable DMARC_MAX_ATTEMPTS\) must be a whole number; got "1.5"/,
    );
  });

  it("refuses a caFile that holds no certificate at check, naming the key, its variable and the file", async () => {
    await configure({
      "dmarc:baseUrl": "https://api.dmarc.example",
      "dmarc:clientId": handle.partner.clientId,
      "dmarc:clientSecret": handle.partner.clientSecret,
      "dmarc:caFile": "/nonexistent/company-ca.pem",
    });
    await expect(host.check("Organization", {}, { name: "x" })).rejects.toThrow(
      /dmarc:caFile \(environment variable DMARC_CA_FILE\) cannot be read \(ENOENT\): it must name a PEM file of one or more certificates; got "\/nonexistent\/company-ca\.pem"\./,
    );
  });

  it("refuses a proxy that is not an http(s) proxy's address at check, never showing it", async () => {
    await configure({
      "dmarc:baseUrl": "https://api.dmarc.example",
      "dmarc:clientId": handle.partner.clientId,
      "dmarc:clientSecret": handle.partner.clientSecret,
      "dmarc:httpsProxy": "socks5://user:Socks-Pass-9931@proxy.corp.example:1080",
    });
    const refusal = host.check("Organization", {}, { name: "x" });
    await expect(refusal).rejects.toThrow(
      /dmarc:httpsProxy \(environment variable DMARC_HTTPS_PROXY\) must be an http:\/\/ or https:\/\/ proxy \(got socks5:\)\./,
    );
    await expect(refusal).rejects.toThrow(/pulumi config set --secret dmarc:httpsProxy <value>/);
    await expect(refusal).rejects.not.toThrow(/Socks-Pass-9931/);
  });

  it("refuses an unusable HTTPS_PROXY at check, naming the variable", async () => {
    const saved = process.env.HTTPS_PROXY;
    process.env.HTTPS_PROXY = "http://proxy.corp.example:3128/some/path";
    try {
      await configure({
        "dmarc:baseUrl": "https://api.dmarc.example",
        "dmarc:clientId": handle.partner.clientId,
        "dmarc:clientSecret": handle.partner.clientSecret,
      });
      await expect(host.check("Organization", {}, { name: "x" })).rejects.toThrow(
        /The proxy in HTTPS_PROXY must be a proxy's address only, no path/,
      );
    } finally {
      if (saved === undefined) delete process.env.HTTPS_PROXY;
      else process.env.HTTPS_PROXY = saved;
    }
  });

  it("compares e-mail addresses without regard to case, so one person is invited once", async () => {
    const lower = await checked("Invitation", { organizationId: "org_1", email: "alice@example.com" });
    const mixed = await checked("Invitation", { organizationId: "org_1", email: " Alice@Example.COM" });
    expect(mixed.email).toBe("alice@example.com");
    expect(await host.diff("Invitation", "org_1/alice@example.com", lower, mixed)).toMatchObject({ changes: false });
  });

  it("fails with the exact keys to set when credentials are missing", async () => {
    await configure({ "dmarc:baseUrl": handle.emulator.url });
    await expect(host.check("Organization", {}, { name: "x" })).rejects.toThrow(
      /dmarc:accessToken.*dmarc:clientId.*dmarc:clientSecret/,
    );
  });
});

describe("diff", () => {
  const cases: [string, Props, Props, { changes: boolean; replaces: string[] }][] = [
    [
      "Organization",
      { name: "a", onDelete: "delete" },
      { name: "b", onDelete: "delete" },
      { changes: true, replaces: [] },
    ],
    [
      "Organization",
      { name: "a", onDelete: "delete" },
      { name: "a", onDelete: "delete" },
      { changes: false, replaces: [] },
    ],
    [
      "Organization",
      { name: "a", onDelete: "delete" },
      { name: "a", onDelete: "cancelSubscriptions" },
      { changes: true, replaces: [] },
    ],
    [
      "DomainGroup",
      { organizationId: "o1", name: "a" },
      { organizationId: "o1", name: "b" },
      { changes: true, replaces: [] },
    ],
    [
      "DomainGroup",
      { organizationId: "o1", name: "a" },
      { organizationId: "o2", name: "a" },
      { changes: true, replaces: ["organizationId"] },
    ],
    [
      "DomainGroup",
      { organizationId: "o1", name: "a" },
      { organizationId: UNKNOWN, name: "a" },
      { changes: true, replaces: ["organizationId"] },
    ],
    [
      "Domain",
      { organizationId: "o", domain: "a.example", type: "sending", groupId: "g", setupRecordType: "TXT" },
      { organizationId: "o", domain: "a.example", type: "parked", groupId: "g", setupRecordType: "TXT" },
      { changes: true, replaces: [] },
    ],
    [
      "Domain",
      { organizationId: "o", domain: "a.example", type: "sending", groupId: "g", setupRecordType: "TXT" },
      { organizationId: "o", domain: "a.example", type: "sending", groupId: "g2", setupRecordType: "TXT" },
      { changes: true, replaces: [] },
    ],
    [
      "Domain",
      { organizationId: "o", domain: "a.example", type: "sending", groupId: "g", setupRecordType: "TXT" },
      { organizationId: "o", domain: "a.example", type: "sending", groupId: "g", setupRecordType: "CNAME" },
      { changes: true, replaces: [] },
    ],
    [
      "Domain",
      { organizationId: "o", domain: "a.example", type: "sending", groupId: "g", setupRecordType: "TXT" },
      { organizationId: "o", domain: "b.example", type: "sending", groupId: "g", setupRecordType: "TXT" },
      { changes: true, replaces: ["domain"] },
    ],
    [
      "Domain",
      { organizationId: "o", domain: "a.example", type: "sending", groupId: "g", setupRecordType: "TXT" },
      { organizationId: "o2", domain: "a.example", type: "sending", groupId: "g", setupRecordType: "TXT" },
      { changes: true, replaces: ["organizationId"] },
    ],
    [
      "Webhook",
      { name: "a", url: "https://x.example", events: ["domain.created"], active: true, ownerId: "p", secretVersion: 0 },
      {
        name: "b",
        url: "https://y.example",
        events: ["domain.verified"],
        active: false,
        ownerId: "p",
        secretVersion: 1,
      },
      { changes: true, replaces: [] },
    ],
    [
      "Webhook",
      { name: "a", url: "https://x.example", events: ["domain.created"], active: true, ownerId: "p", secretVersion: 0 },
      { name: "a", url: "https://x.example", events: ["domain.created"], active: true, ownerId: "q", secretVersion: 0 },
      { changes: true, replaces: ["ownerId"] },
    ],
    [
      "Subscription",
      { organizationId: "o", priceId: "p1", status: "active" },
      { organizationId: "o", priceId: "p2" },
      { changes: true, replaces: [] },
    ],
    [
      "Subscription",
      { organizationId: "o", priceId: "p1", status: "active" },
      { organizationId: "o2", priceId: "p1" },
      { changes: true, replaces: ["organizationId"] },
    ],
    [
      "Subscription",
      { organizationId: "o", priceId: "p1", status: "suspended" },
      { organizationId: "o", priceId: "p1" },
      { changes: true, replaces: [] },
    ],
    [
      "Subscription",
      { organizationId: "o", priceId: "p1", status: "active" },
      { organizationId: "o", priceId: "p1" },
      { changes: false, replaces: [] },
    ],
    [
      "Invitation",
      { organizationId: "o", email: "a@b.example", role: "admin" },
      { organizationId: "o", email: "a@b.example", role: "no_access" },
      { changes: true, replaces: ["role"] },
    ],
    [
      "Invitation",
      { organizationId: "o", email: "a@b.example", role: "admin" },
      { organizationId: "o", email: "c@b.example", role: "admin" },
      { changes: true, replaces: ["email"] },
    ],
  ];

  it.each(cases)("%s %j -> %j", async (typeName, olds, news, expected) => {
    const result = await host.diff(typeName, "id", olds, news);
    expect({ changes: result.changes, replaces: result.replaces }).toEqual(expected);
  });
});

describe("lifecycle against the emulator", () => {
  async function organizationWithGroup() {
    const org = await created("Organization", { name: "Lifecycle Ltd" });
    const group = await created("DomainGroup", { organizationId: org.id, name: "main" });
    return { organizationId: org.id, groupId: groupIdOf(group.id), groupResourceId: group.id };
  }

  it("Organization: create, read, rename, gone, delete twice", async () => {
    const { id, outs } = await created("Organization", { name: "Before" });
    expect(outs).toMatchObject({ name: "Before" });
    // Derived from the resource id by the class, so not recorded in the state.
    expect(outs).not.toHaveProperty("organizationId");
    const updated = await host.update("Organization", id, outs, await checked("Organization", { name: "After" }));
    expect(updated.outs).toMatchObject({ name: "After" });
    const read = await host.read("Organization", id, updated.outs as Props);
    expect(read.props).toMatchObject({ name: "After" });
    expect(read.inputs).toEqual({ name: "After", onDelete: "delete" });
    await host.delete("Organization", id, updated.outs as Props);
    expect(await host.read("Organization", id, updated.outs as Props)).toEqual({});
    await host.delete("Organization", id, updated.outs as Props);
  });

  it("Organization: delete cancels active subscriptions first; cancelSubscriptions keeps the organisation", async () => {
    const plans = await client.listPlans();
    const priceId = plans[0]?.prices[0]?.id as string;
    const deleted = await created("Organization", { name: "Offboarded" });
    await client.assignSubscription({ organizationId: deleted.id, priceId });
    await host.delete("Organization", deleted.id, deleted.outs);
    expect(await client.getOrganization(deleted.id)).toBeUndefined();

    const kept = await created("Organization", { name: "Kept", onDelete: "cancelSubscriptions" });
    await client.assignSubscription({ organizationId: kept.id, priceId });
    await host.delete("Organization", kept.id, kept.outs);
    expect(await client.getOrganization(kept.id)).toBeDefined();
    const subscriptions = await client.listSubscriptions(kept.id);
    expect(subscriptions.map((subscription) => subscription.cancelledAt !== null)).toEqual([true]);
  });

  it("DomainGroup: rename in place, import by id, delete", async () => {
    const { organizationId, groupResourceId } = await organizationWithGroup();
    expect(groupResourceId).toMatch(new RegExp(`^${organizationId}/dmngrp_`));
    const imported = await host.read("DomainGroup", groupResourceId, undefined);
    expect(imported.inputs).toEqual({ organizationId, name: "main" });
    const renamed = await host.update(
      "DomainGroup",
      groupResourceId,
      imported.props as Props,
      await checked("DomainGroup", { organizationId, name: "renamed" }),
    );
    expect(renamed.outs).toMatchObject({ name: "renamed" });
    await host.delete("DomainGroup", groupResourceId, renamed.outs as Props);
    expect(await host.read("DomainGroup", groupResourceId, renamed.outs as Props)).toEqual({});
  });

  it("DomainGroup: a delete refused while the group holds a domain waits for the domain's delete", async () => {
    const { organizationId, groupId, groupResourceId } = await organizationWithGroup();
    await client.createDomain({ organizationId, domain: "held.example", type: "sending", groupId });
    const groupDeleted = host.delete("DomainGroup", groupResourceId, { organizationId, name: "main" });
    // The domain goes once the service has refused the group's delete for it.
    await expect.poll(() => refusedGroupDeletes(groupId), { timeout: 30_000 }).toBeGreaterThan(0);
    await client.deleteDomain(organizationId, "held.example");
    await groupDeleted;
    expect(await client.readDomainGroup(organizationId, groupId)).toBeUndefined();
  });

  it("DomainGroup: a delete still refused after maxRetryElapsedMs names the domains that hold it and the wait", async () => {
    await configure({
      "dmarc:baseUrl": handle.emulator.url,
      "dmarc:clientId": handle.partner.clientId,
      "dmarc:clientSecret": handle.partner.clientSecret,
      "dmarc:maxRetryElapsedMs": "2000",
    });
    const { organizationId, groupId, groupResourceId } = await organizationWithGroup();
    await client.createDomain({ organizationId, domain: "kept.example", type: "sending", groupId });
    const refused = host.delete("DomainGroup", groupResourceId, { organizationId, name: "main" });
    await expect(refused).rejects.toThrow(
      new RegExp(`DomainGroup ${groupResourceId} still holds kept\\.example after waiting \\d+\\.\\d s`),
    );
    expect(await client.readDomainGroup(organizationId, groupId)).toMatchObject({ domains: ["kept.example"] });
  });

  it("previews an update with no request: outputs as recorded unless an input they depend on changed", async () => {
    const olds = { name: "hooks", url: "https://hooks.example/in", events: ["domain.created"], active: true };
    const recorded = { ...olds, ownerId: "prt_1", secretVersion: 0, secret: "whsec_recorded" };
    const renamed = host.previewUpdate("Webhook", recorded, { ...recorded, name: "renamed" });
    expect(renamed).toMatchObject({ name: "renamed", secret: "whsec_recorded" });
    const rotated = host.previewUpdate("Webhook", recorded, { ...recorded, secretVersion: 1 });
    expect(rotated).toMatchObject({ secretVersion: 1, secret: UNKNOWN });
    const subscription = {
      organizationId: "org_1",
      priceId: "price_1",
      subscriptionId: "sub_1",
      status: "active",
      expireDate: "2030-01-01T00:00:00Z",
      cancelledAt: null,
    };
    // An active subscription is read again: the service may have cancelled, renewed or moved it since the last read.
    expect(
      host.previewUpdate("Subscription", subscription, { ...subscription, keepActiveUntil: "2031-01-01" }),
    ).toEqual({ ...subscription, keepActiveUntil: "2031-01-01", subscriptionId: UNKNOWN, expireDate: UNKNOWN });
    const suspended = { ...subscription, suspended: true, status: "suspended", cancelledAt: "2029-01-01T00:00:00Z" };
    expect(host.previewUpdate("Subscription", suspended, { ...suspended, keepActiveUntil: "2031-01-01" })).toEqual({
      ...suspended,
      keepActiveUntil: "2031-01-01",
    });
    const setupRecord = {
      host: "_dmarc.mail.acme.example",
      name: "_dmarc.mail",
      zone: "acme.example",
      type: "txt",
      recordType: "TXT",
      value: "v=DMARC1; p=none",
    };
    const domain = {
      organizationId: "org_1",
      domain: "mail.acme.example",
      type: "sending",
      groupId: "grp_1",
      setupRecordType: "TXT",
      zone: "acme.example",
      setupRecord,
      verified: true,
      policy: "none",
      domainGroup: "Main",
    };
    const { zone: _zone, ...inItsOwnZone } = domain;
    expect(host.previewUpdate("Domain", domain, { ...inItsOwnZone, zone: "mail.acme.example" })).toMatchObject({
      setupRecord: { ...setupRecord, name: "_dmarc", zone: "mail.acme.example" },
      // Every update reads the domain again: the service may have verified it since.
      verified: UNKNOWN,
    });
    expect(host.previewUpdate("Domain", domain, { ...domain, setupRecordType: "CNAME" })).toMatchObject({
      setupRecord: { ...setupRecord, type: "cname", recordType: "CNAME", value: UNKNOWN },
    });
    // Cancelled behind the program's back: the update re-activates it, so every output may change.
    const cancelled = { ...subscription, status: "suspended", cancelledAt: "2029-01-01T00:00:00Z" };
    expect(host.previewUpdate("Subscription", cancelled, { organizationId: "org_1", priceId: "price_1" })).toEqual({
      organizationId: "org_1",
      priceId: "price_1",
      subscriptionId: UNKNOWN,
      status: UNKNOWN,
      expireDate: UNKNOWN,
      cancelledAt: UNKNOWN,
    });
    // Not verified when last read: any update waits for the service again, so what it records is not known.
    const unverified = {
      organizationId: "org_1",
      domain: "acme.example",
      timeout: "45m",
      pollInterval: "15s",
      verified: false,
      policy: "missing",
    };
    expect(host.previewUpdate("DomainVerification", unverified, { ...unverified, timeout: "1h" })).toMatchObject({
      verified: UNKNOWN,
      policy: UNKNOWN,
    });
    expect(
      host.previewUpdate("DomainVerification", { ...unverified, verified: true }, { ...unverified, timeout: "1h" }),
    ).toMatchObject({ verified: true, policy: "missing" });
  });

  it("Domain: setup record shaped for DNS providers, TXT or CNAME, zone-relative name, update type and group", async () => {
    const { organizationId, groupId } = await organizationWithGroup();
    const txt = await created("Domain", {
      organizationId,
      domain: "mail.lifecycle.example",
      groupId,
      zone: "lifecycle.example",
    });
    expect(txt.id).toBe(`${organizationId}/mail.lifecycle.example`);
    expect(txt.outs.setupRecord).toMatchObject({
      host: "_dmarc.mail.lifecycle.example",
      name: "_dmarc.mail",
      zone: "lifecycle.example",
      type: "txt",
      recordType: "TXT",
    });
    expect((txt.outs.setupRecord as { value: string }).value).toMatch(/^v=DMARC1;.*p=\w+.*rua=mailto:.*fo=/);
    expect(txt.outs).toMatchObject({ verified: false, type: "sending" });

    const otherGroup = await created("DomainGroup", { organizationId, name: "other" });
    const news = await checked("Domain", {
      organizationId,
      domain: "mail.lifecycle.example",
      groupId: groupIdOf(otherGroup.id),
      type: "parked",
      setupRecordType: "CNAME",
      zone: "lifecycle.example",
    });
    const updated = await host.update("Domain", txt.id, txt.outs, news);
    expect(updated.outs).toMatchObject({ type: "parked", groupId: groupIdOf(otherGroup.id) });
    expect(updated.outs?.setupRecord).toMatchObject({ type: "cname", recordType: "CNAME", name: "_dmarc.mail" });
    const remote = await client.getDomain(organizationId, "mail.lifecycle.example");
    expect(remote).toMatchObject({ type: "parked", domainGroupId: groupIdOf(otherGroup.id) });

    await host.delete("Domain", txt.id, updated.outs as Props);
    expect(await host.read("Domain", txt.id, updated.outs as Props)).toEqual({});
    await host.delete("Domain", txt.id, updated.outs as Props);
  });

  it("Domain: the zone defaults to the domain itself", async () => {
    const { organizationId, groupId } = await organizationWithGroup();
    const apex = await created("Domain", { organizationId, domain: "apex.example", groupId });
    expect(apex.outs.setupRecord).toMatchObject({ host: "_dmarc.apex.example", name: "_dmarc", zone: "apex.example" });
  });

  it("Webhook: secret only from create and rotation, updates in place, read keeps the secret", async () => {
    const hook = await created("Webhook", {
      name: "events",
      url: "https://hooks.example.com/dmarc",
      events: ["domain.created"],
    });
    const secret = hook.outs.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const read = await host.read("Webhook", hook.id, hook.outs);
    expect(read.props).toMatchObject({ secret });

    const renamed = await host.update(
      "Webhook",
      hook.id,
      hook.outs,
      await checked("Webhook", {
        name: "renamed",
        url: "https://hooks.example.com/v2",
        events: ["domain.created", "domain.verified"],
        active: false,
      }),
    );
    expect(renamed.outs).toMatchObject({ name: "renamed", active: false, secret });
    expect(await client.getWebhook(hook.id)).toMatchObject({ url: "https://hooks.example.com/v2", active: false });

    const rotated = await host.update(
      "Webhook",
      hook.id,
      renamed.outs as Props,
      await checked("Webhook", {
        name: "renamed",
        url: "https://hooks.example.com/v2",
        events: ["domain.created", "domain.verified"],
        active: false,
        secretVersion: 1,
      }),
    );
    expect(rotated.outs?.secret).toMatch(/^whsec_/);
    expect(rotated.outs?.secret).not.toBe(secret);
    await host.delete("Webhook", hook.id, rotated.outs as Props);
    expect(await host.read("Webhook", hook.id, rotated.outs as Props)).toEqual({});
  });

  it("Subscription: price change moves to a new id, keepActiveUntil renews, drift re-activates, delete cancels", async () => {
    const { organizationId } = await organizationWithGroup();
    const plans = await client.listPlans();
    const starter = plans.find((plan) => plan.name === "Starter");
    const business = plans.find((plan) => plan.name === "Business");
    const starterMonthly = starter?.prices.find((price) => price.frequency === "m")?.id as string;
    const businessMonthly = business?.prices.find((price) => price.frequency === "m")?.id as string;

    const sub = await created("Subscription", { organizationId, priceId: starterMonthly });
    expect(sub.id).toBe(`${organizationId}/${sub.outs.subscriptionId}`);
    expect(sub.outs.status).toBe("active");

    const inTwoYears = new Date(Date.now() + 2 * 365 * 86_400_000).toISOString();
    const upgraded = await host.update(
      "Subscription",
      sub.id,
      sub.outs,
      await checked("Subscription", { organizationId, priceId: businessMonthly, keepActiveUntil: inTwoYears }),
    );
    const outs = upgraded.outs as Props;
    expect(outs.subscriptionId).not.toBe(sub.outs.subscriptionId);
    expect(outs.priceId).toBe(businessMonthly);
    expect(Date.parse(outs.expireDate as string)).toBeGreaterThan(Date.parse(inTwoYears));

    await client.cancelSubscription(outs.subscriptionId as string);
    const refreshed = await host.read("Subscription", sub.id, outs);
    expect(refreshed.props).toMatchObject({ status: "suspended" });
    const diff = await host.diff("Subscription", sub.id, refreshed.props as Props, {
      organizationId,
      priceId: businessMonthly,
      keepActiveUntil: inTwoYears,
    });
    expect(diff.changes).toBe(true);
    const reactivated = await host.update(
      "Subscription",
      sub.id,
      refreshed.props as Props,
      await checked("Subscription", { organizationId, priceId: businessMonthly, keepActiveUntil: inTwoYears }),
    );
    expect(reactivated.outs).toMatchObject({ status: "active" });

    await host.delete("Subscription", sub.id, reactivated.outs as Props);
    const all = await client.listSubscriptions(organizationId);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((subscription) => subscription.cancelledAt === null)).toEqual([]);
    await host.delete("Subscription", sub.id, reactivated.outs as Props);
  });

  it("Subscription: a create the service refuses as a second active one (409) takes over the active one at the declared price", async () => {
    const { organizationId } = await organizationWithGroup();
    const plans = await client.listPlans();
    const priceOf = (name: string) =>
      plans.find((plan) => plan.name === name)?.prices.find((price) => price.frequency === "m")?.id as string;
    const outside = await client.assignSubscription({ organizationId, priceId: priceOf("Starter") });

    const sub = await created("Subscription", { organizationId, priceId: priceOf("Business") });
    expect(sub.outs).toMatchObject({ status: "active", priceId: priceOf("Business") });
    const active = (await client.listSubscriptions(organizationId)).filter((item) => item.cancelledAt === null);
    expect(active.map((item) => item.id)).toEqual([sub.outs.subscriptionId]);
    expect(sub.outs.subscriptionId).not.toBe(outside.id);

    const same = await created("Subscription", { organizationId, priceId: priceOf("Business") });
    expect(same.outs.subscriptionId).toBe(sub.outs.subscriptionId);
  });

  it("importId adopts an existing object, and refuses a missing or different one without changing it", async () => {
    const existing = await client.createOrganization({ name: "Existing Ltd" });
    const adopted = await host.create(
      "Organization",
      await checked("Organization", { name: "Existing Ltd", importId: existing.id }),
    );
    expect(adopted.id).toBe(existing.id);
    expect(adopted.outs).toMatchObject({ name: "Existing Ltd", importId: existing.id });

    await expect(
      host.create("Organization", await checked("Organization", { name: "Other name", importId: existing.id })),
    ).rejects.toThrow(/differs from its declaration \(name: declared "Other name", actual "Existing Ltd"\)/);
    expect((await client.getOrganization(existing.id))?.name).toBe("Existing Ltd");

    await expect(
      host.create(
        "Organization",
        await checked("Organization", { name: "Ghost", importId: "org_000000000000000000000000" }),
      ),
    ).rejects.toThrow(/does not exist/);
    const bad = await host.check("Organization", {}, { name: "x", importId: "" });
    expect(bad.failures?.[0]?.reason).toContain('Organization input "importId" must be the id of an existing object');
  });

  it("Invitation: invite, read the user, revoke, notice the user is gone", async () => {
    const { organizationId } = await organizationWithGroup();
    const invite = await created("Invitation", { organizationId, email: "admin@lifecycle.example" });
    expect(invite.id).toBe(`${organizationId}/admin@lifecycle.example`);
    expect(invite.outs).toMatchObject({ role: "admin", email: "admin@lifecycle.example" });
    expect(invite.outs.userId).toEqual(expect.any(String));
    const read = await host.read("Invitation", invite.id, undefined);
    expect(read.inputs).toEqual({ organizationId, email: "admin@lifecycle.example", role: "admin" });
    await host.delete("Invitation", invite.id, invite.outs);
    expect(await host.read("Invitation", invite.id, invite.outs)).toEqual({});
    await host.delete("Invitation", invite.id, invite.outs);
  });
});

describe("a create whose answer was lost", () => {
  const organizationCreates = async () =>
    (await handle.control<{ byRoute: Record<string, number> }>("GET", "/stats")).byRoute["POST /v1/organizations"] ?? 0;
  const named = async (name: string) =>
    (await client.listOrganizations()).filter((org) => org.name === name).map((org) => org.id);

  it("takes none when two organisations of the name were made meanwhile, naming both", async () => {
    const before = await organizationCreates();
    await handle.control("POST", "/faults", {
      route: "POST /v1/organizations",
      processingMs: 1_000,
      dropAfterProcessing: true,
      times: 1,
    });
    const create = created("Organization", { name: "Twin Ltd" }).then(
      () => undefined,
      (error: Error) => error,
    );
    // A second stack, or a person, makes one of the same name while the first create is being carried out.
    for (let waited = 0; (await organizationCreates()) === before && waited < 300; waited++) await sleep(50);
    const byHand = await client.createOrganization({ name: "Twin Ltd" });
    const error = await create;
    const made = await named("Twin Ltd");
    expect(made).toHaveLength(2);
    expect(error?.message).toContain("the answer to its create was lost");
    expect(error?.message).toContain("None was taken");
    for (const id of made) expect(error?.message).toContain(id);
    expect(made).toContain(byHand.id);
  });
});
