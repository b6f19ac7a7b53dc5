import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import * as api from "../api";
import { FrequencyName } from "../functions/plans";
import { domainGroup } from "../resources/domainGroup";
import { organization } from "../resources/organization";
import { rfc2136Record } from "../resources/rfc2136Record";
import { defaultMessage, keyPathOf, mapping, refusalsOf, repeats, valueAt } from "../runtime/values";
import { pointInTenant } from "../tenant/args";
import {
  type DomainPolicy,
  type DomainPolicyEntry,
  EvidenceShape,
  mergeRules,
  PolicyPosition,
  PolicyRules,
  policyProblems,
  resolvePolicy,
} from "../tenant/policy";
import {
  TenantDomain,
  TenantIds,
  TenantKey,
  TenantOnDelete,
  TenantSubscription,
  TenantWebhookList,
} from "../tenant/schema";

/**
 * A problem with the inventory. A `pulumi.RunError`, so a preview stops with
 * just these lines instead of a stack trace through the program.
 */
export class InventoryError extends pulumi.RunError {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
  }
}

const rfc2136 = rfc2136Record.inputs.shape;

/**
 * How a domain's setup record is published: by RFC 2136 update with
 * `Rfc2136Record`, or `none` (the partner publishes it). The key's secret is
 * never in the file: it is read from the environment variable named.
 */
const DnsPublishing = z
  .union([
    z.literal("none"),
    mapping({
      rfc2136: mapping({
        server: rfc2136.server,
        zone: rfc2136.zone,
        keyName: rfc2136.keyName,
        keyAlgorithm: rfc2136.keyAlgorithm.unwrap().optional(),
        ttl: rfc2136.ttl.unwrap().optional(),
        keySecretEnv: z
          .string()
          .regex(/^[A-Z_][A-Z0-9_]*$/, { message: "must be an environment variable's name, such as DNS_KEY_SECRET" })
          .describe("The environment variable holding the TSIG key's secret (base64); the file never holds it."),
      }).describe("Publish by RFC 2136 dynamic update signed with TSIG, as `Rfc2136Record` does."),
    }),
    mapping({
      publisher: z
        .string()
        .regex(/\.c?js$/, { message: "must be a CommonJS module's path ending in .js or .cjs, such as ./publish.js" })
        .describe(
          "A CommonJS module, relative to this file, exporting `publishRecord` (the Tenant's hook): for a DNS service with only its own API, through its Pulumi package.",
        ),
    }),
  ])
  .describe(
    "How the setup record is published: `{ rfc2136: {...} }`, `{ publisher: ./publish.js }`, or `none` to publish it yourself.",
  );
export type DnsPublishing = z.output<typeof DnsPublishing>;

const PolicyEntry = mapping({
  ...PolicyRules,
  evidence: mapping(EvidenceShape).optional().describe("What a step needs before the next one is proposed."),
}).describe("The DMARC policy ramp: where the domains' records should end, and the evidence each step needs.");

const DomainPolicyMapping = mapping({ ...PolicyEntry.shape, ...PolicyPosition }).describe(
  "The domain's DMARC policy ramp (the tenant's and the defaults' keys, key by key, where not given) and where it is on it. Not for a domain whose record the service hosts (CNAME) or nobody here publishes (`dns: none`).",
);

const DomainEntry = mapping({
  // The inventory's own `policy` merges with its tenant's and the defaults', so it comes last, with `dns`.
  ...TenantDomain.omit({ policy: true }).shape,
  dns: DnsPublishing.optional().describe("How this domain's record is published; the tenant's `dns` when not given."),
  // Absent unless the file sets it (the Domain applies its default): the fleet digests parsed tenants to
  // tell which shards changed, and a value filled in here would change every deployed shard's digest.
  setupRecordType: TenantDomain.shape.setupRecordType.unwrap().optional(),
  policy: DomainPolicyMapping.optional(),
});

const TenantEntry = mapping({
  name: organization.inputs.shape.name.describe(
    "The organisation's name. Renaming updates the organisation in place as long as `key` stays the same.",
  ),
  key: TenantKey.optional().describe(
    "Stem of the tenant's resource names (`<key>/group`, `<key>/subscription`...); the name in lower-case words joined by hyphens when not given. Keep it across renames.",
  ),
  group: domainGroup.inputs.shape.name.describe("Name of the tenant's domain group."),
  groups: z
    .array(domainGroup.inputs.shape.name)
    .describe("Further domain groups of the organisation, by name; a domain whose `group` names one of them is in it.")
    .default([]),
  plan: z
    .string()
    .min(1, { message: "must name a plan of the partner's catalogue, such as Business" })
    .optional()
    .describe(
      "Plan name of the partner's catalogue, matched without regard to case, e.g. `Business`; required unless `subscription` is `none`, which ignores it.",
    ),
  subscription: TenantSubscription.describe(
    "Where the subscription stands: `active` (assigned and kept active), `suspended` (an adopted cancelled subscription, `ids.subscription`, kept cancelled: the organisation stays suspended; changing an active one to `suspended` cancels it, and back to `active` renews it) or `none` (the organisation has no subscription and the tenant declares none).",
  ).default("active"),
  frequency: FrequencyName.describe("Billing frequency of the plan's price.").default("monthly"),
  currency: api.Currency.optional().describe(
    "Currency of the plan's price; needed only when the plan has prices in several currencies for the frequency.",
  ),
  domains: z.array(DomainEntry).describe("The tenant's domains.").default([]),
  admins: z.array(api.Email).describe("E-mail addresses invited as administrators of the organisation.").default([]),
  webhooks: TenantWebhookList.describe(
    "Webhooks owned by the organisation: they receive its events only and go when it goes.",
  ).default([]),
  onDelete: TenantOnDelete.describe(
    "What removing the tenant from the file does: `delete` its organisation, only `cancelSubscriptions` (the organisation and its data stay), or `keep` (nothing on the service is touched).",
  ).default("delete"),
  dns: DnsPublishing.optional().describe(
    "How the tenant's setup records are published, unless a domain says otherwise; nothing is published when not given.",
  ),
  policy: PolicyEntry.optional(),
  ids: mapping(TenantIds.shape)
    .optional()
    .describe(
      "Ids of existing objects to adopt instead of creating them (moving in): nothing adopted is changed or created again.",
    ),
});

/** Values every tenant takes unless it sets its own. */
const DefaultsEntry = mapping(
  TenantEntry.pick({
    group: true,
    plan: true,
    frequency: true,
    currency: true,
    subscription: true,
    onDelete: true,
    dns: true,
    policy: true,
  }).partial().shape,
);
const DEFAULTED_KEYS = Object.keys(DefaultsEntry.shape);

export type InventoryTenant = z.output<typeof TenantEntry> & {
  /** Where the tenant stands in the file, for messages: `tenant "Acme" (tenants[1])`. */
  label: string;
  /** Stem of every resource name of the tenant. */
  key: string;
};

/** The tenant's `key`, or its name in lower-case words joined by hyphens (accents dropped). */
export function keyOf(tenant: { name: string; key?: string | undefined }): string {
  return (
    tenant.key ??
    tenant.name
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
  );
}

type Issue = { path: PropertyKey[]; message: string };

/** A domain's record published by RFC 2136 must fall inside the zone named for it. */
function zoneChecks(tenant: z.output<typeof TenantEntry>, index: number, position: number): Issue[] {
  const domain = tenant.domains[position];
  if (domain === undefined) return [];
  const publishing = domain.dns ?? tenant.dns;
  const zone =
    publishing !== undefined && publishing !== "none" && "rfc2136" in publishing ? publishing.rfc2136.zone : undefined;
  if (zone === undefined || domain.name === zone || domain.name.endsWith(`.${zone}`)) return [];
  return [
    {
      path: ["tenants", index, ...(domain.dns ? ["domains", position] : []), "dns", "rfc2136", "zone"],
      message: `must contain ${domain.name}, whose record it publishes`,
    },
  ];
}

/** Why a domain's record is not the fleet's to move, if it is not. */
function hostedReason(tenant: z.output<typeof TenantEntry>, domain: z.output<typeof DomainEntry>): string | undefined {
  if (domain.setupRecordType === "CNAME")
    return "the service hosts this domain's record (setupRecordType: CNAME), so its policy is set in the service, not here";
  if ((domain.dns ?? tenant.dns) === "none")
    return "nobody here publishes this domain's record (dns: none), so its policy is not the fleet's to move";
  return undefined;
}

/** A domain's ramp must hold together, and only a record the fleet publishes has one. */
function policyChecks(tenant: z.output<typeof TenantEntry>, index: number, position: number): Issue[] {
  const domain = tenant.domains[position];
  if (domain === undefined) return [];
  const domainPath = ["tenants", index, "domains", position, "policy"];
  const hosted = domain.policy ? hostedReason(tenant, domain) : undefined;
  if (hosted) return [{ path: domainPath, message: `cannot be set: ${hosted}` }];
  if (!domain.policy && !tenant.policy) return [];
  const merged = mergeRules(tenant.policy, domain.policy ?? {});
  return policyProblems(merged).map(({ key, message }) => ({
    path: domain.policy?.[key] !== undefined ? [...domainPath, key] : ["tenants", index, "policy", key],
    message,
  }));
}

/** The plan, subscription and ids must say one thing; every domain's group is one of the tenant's. */
function stateChecks(tenant: z.output<typeof TenantEntry>, index: number): Issue[] {
  const at = (...path: PropertyKey[]) => ["tenants", index, ...path];
  const issues: Issue[] = [];
  if (tenant.subscription !== "none" && tenant.plan === undefined)
    issues.push({ path: at("plan"), message: "is required unless subscription is none" });
  if (tenant.subscription === "suspended" && tenant.ids?.subscription === undefined)
    issues.push({
      path: at("subscription"),
      message: "keeps an existing cancelled subscription cancelled: set ids.subscription to its id",
    });
  if (tenant.subscription === "none" && tenant.ids?.subscription !== undefined)
    issues.push({ path: at("ids", "subscription"), message: "names a subscription, but subscription is none" });
  tenant.groups.forEach((group, position) => {
    if (group === tenant.group) issues.push({ path: at("groups", position), message: "is the tenant's group already" });
  });
  const known = [tenant.group, ...tenant.groups];
  tenant.domains.forEach((domain, position) => {
    if (domain.group !== undefined && !known.includes(domain.group))
      issues.push({
        path: at("domains", position, "group"),
        message: `must be the tenant's group or one of its groups (${known.map((name) => `"${name}"`).join(", ")})`,
      });
  });
  return issues;
}

/**
 * An organisation's name is declared once: the service does not tell two
 * organisations of one name apart, and neither could a recovery that lost a
 * create of one (docs/guides/fleets.md, "A customer in one place").
 */
function nameChecks(tenants: readonly z.output<typeof TenantEntry>[]): Issue[] {
  const first = new Map<string, number>();
  return tenants.flatMap((tenant, index) => {
    const other = first.get(tenant.name);
    if (other === undefined) first.set(tenant.name, index);
    const message = `is the name of tenants[${other}] too: give two customers different names, or list one customer once`;
    return other === undefined ? [] : [{ path: ["tenants", index, "name"], message }];
  });
}

/**
 * What the schema cannot see entry by entry: resource names must not collide,
 * a domain belongs to one tenant, and an admin or webhook is listed once.
 */
function crossChecks(tenants: readonly z.output<typeof TenantEntry>[]): Issue[] {
  const issues: Issue[] = [];
  const keys = new Map<string, number>();
  const domainOwners = new Map<string, string>();
  tenants.forEach((tenant, index) => {
    const key = keyOf(tenant);
    const keyField = ["tenants", index, tenant.key === undefined ? "name" : "key"];
    const other = keys.get(key);
    if (key === "") {
      issues.push({ path: keyField, message: "gives no resource name (it has no letters or digits): set key" });
    } else if (other !== undefined) {
      issues.push({
        path: keyField,
        message: `gives the resource name "${key}", as tenants[${other}] does: set a different key`,
      });
    } else keys.set(key, index);
    issues.push(...stateChecks(tenant, index));

    tenant.domains.forEach((domain, position) => {
      issues.push(...zoneChecks(tenant, index, position), ...policyChecks(tenant, index, position));
      const owner = domainOwners.get(domain.name);
      if (owner !== undefined) {
        issues.push({
          path: ["tenants", index, "domains", position, "name"],
          message: `is listed already, under ${owner}`,
        });
      } else domainOwners.set(domain.name, `tenant "${tenant.name}" (tenants[${index}])`);
    });
    const listedOnce = (values: readonly string[], field: string, inner: string[] = []) => {
      for (const { position, first } of repeats(values)) {
        issues.push({
          path: ["tenants", index, field, position, ...inner],
          message: `is listed already, at ${keyPathOf([field, first, ...inner])}`,
        });
      }
    };
    listedOnce(tenant.admins, "admins");
    listedOnce(tenant.groups, "groups");
    listedOnce(
      tenant.webhooks.map((webhook) => webhook.name),
      "webhooks",
      ["name"],
    );
  });
  return issues;
}

/** An approved offboarding: a fleet's tenant, no longer under `tenants`, that a run may offboard. */
const TombstoneEntry = mapping({
  key: TenantKey.describe(
    "The key of the tenant to offboard, the stem of its resource names: its entry's `key`, or its name in lower-case words joined by hyphens.",
  ),
  note: z.string().min(1).max(500).optional().describe("Why, or who approved it; shown in the plan."),
  date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date as YYYY-MM-DD, such as 2026-11-30" })
    .optional()
    .describe("When it was approved, `YYYY-MM-DD`; shown in the plan."),
});

export type InventoryTombstone = z.output<typeof TombstoneEntry>;

/** A tombstone names a tenant once, and never one the file still lists. */
function tombstoneChecks(
  tenants: readonly z.output<typeof TenantEntry>[],
  tombstones: readonly InventoryTombstone[],
): Issue[] {
  const listed = new Map(
    tenants.map((tenant, index) => [keyOf(tenant), `tenant "${tenant.name}" (tenants[${index}])`]),
  );
  const keys = tombstones.map((tombstone) => tombstone.key);
  return [
    ...repeats(keys).map(({ position, first }) => ({
      path: ["offboard", position, "key"],
      message: `is listed already, at offboard[${first}].key`,
    })),
    ...keys.flatMap((key, position) => {
      const tenant = listed.get(key);
      return tenant === undefined
        ? []
        : [
            {
              path: ["offboard", position, "key"],
              message: `is the key of ${tenant}, which the file still lists: remove the tenant's entry to offboard it, or this tombstone to keep it`,
            },
          ];
    }),
  ];
}

/**
 * The inventory file; its descriptions make the inventory's reference page (`npm run docs`).
 * @readFromDist scripts/reference/index.mjs loads it from dist/inventory/inventory.js
 */
export const InventoryFile = mapping({
  defaults: DefaultsEntry.optional().describe("Values every tenant takes unless it sets its own."),
  tenants: z.array(TenantEntry).describe("The partner's tenants, each declared as a `Tenant` component."),
  offboard: z
    .array(TombstoneEntry)
    .describe(
      "Tombstones: tenants `dmarc-fleet` may offboard. A fleet offboards a deployed tenant missing from `tenants` only when it is listed here or named by `--allow-offboard`; a program declaring the tenants itself does not read this list.",
    )
    .default([]),
})
  .superRefine((inventory, context) => {
    for (const issue of [...crossChecks(inventory.tenants), ...nameChecks(inventory.tenants)])
      context.addIssue({ code: "custom", ...issue });
    for (const issue of tombstoneChecks(inventory.tenants, inventory.offboard))
      context.addIssue({ code: "custom", ...issue });
  })
  .describe(
    "The tenants inventory, `tenants.yaml`: the partner's customers as data, read by `loadInventory` and `declareTenants` in a program and by `dmarc-fleet`. Each tenant becomes a `Tenant` component. A key not listed here is refused, tenant keys, organisation names and domains must be unique across the file, and an admin or webhook is listed once per tenant; every problem is reported at once, naming the tenant and the key.",
  );

/**
 * Where a path points: `tenant "Acme" (tenants[1]) domain acme.example (domains[0]) policy.stage`,
 * `tenant "Acme" (tenants[1]) plan`, or just the key path outside the tenants.
 */
function pointer(raw: unknown, path: readonly PropertyKey[]): string {
  const [list, index, ...rest] = path;
  if (list !== "tenants" || typeof index !== "number") return keyPathOf(path);
  const name = valueAt(raw, ["tenants", index, "name"]);
  const tenant = typeof name === "string" && name !== "" ? `tenant "${name}" (tenants[${index}])` : `tenants[${index}]`;
  return rest.length === 0 ? tenant : `${tenant} ${pointInTenant(valueAt(raw, ["tenants", index]), rest)}`;
}

function problemsOf(source: string, raw: unknown, issues: readonly z.core.$ZodIssue[]): string[] {
  return refusalsOf(raw, issues, (path) => pointer(raw, path)).map((problem) => `${source}: ${problem}`);
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** A tenant mapping with the defaults it does not set; a `policy` it sets takes the defaults' other policy keys. */
function inheriting(inherited: Record<string, unknown>, tenant: object): object {
  const own = (tenant as { policy?: unknown }).policy;
  const policy =
    isMapping(inherited.policy) && isMapping(own)
      ? { policy: mergeRules(inherited.policy as PolicyRules, own as PolicyRules) }
      : {};
  return { ...inherited, ...tenant, ...policy };
}

/** The file with the `defaults` block's values copied into every tenant mapping that does not set them. */
function withDefaults(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object") return raw;
  const { defaults, tenants } = raw as { defaults?: unknown; tenants?: unknown };
  if (defaults === null || typeof defaults !== "object" || !Array.isArray(tenants)) return raw;
  const inherited = Object.fromEntries(
    Object.entries(defaults).filter(([key, value]) => DEFAULTED_KEYS.includes(key) && value !== undefined),
  );
  return {
    ...raw,
    tenants: tenants.map((tenant: unknown) =>
      tenant !== null && typeof tenant === "object" && !Array.isArray(tenant) ? inheriting(inherited, tenant) : tenant,
    ),
  };
}

export interface Inventory {
  tenants: InventoryTenant[];
  /** Tenants whose offboarding the file approves (`offboard:`). */
  offboard: InventoryTombstone[];
  /** The file's name, which every message starts with. */
  source: string;
  /** The folder the file is in: `dns.publisher` modules are found from there. */
  folder: string;
}

/** Reads and checks the inventory file at `path`; messages name the file by its base name. */
export function loadInventory(path: string): Inventory {
  return parseInventory(readFileSync(path, "utf8"), basename(path), dirname(path));
}

/**
 * Parses and checks an inventory. Every problem is reported at once, one line
 * each, naming the tenant by name and index and the key inside it, e.g.
 * `tenants.yaml: tenant "Acme" (tenants[1]) domain Acme.COM (domains[0]) name: must be a lower-case domain name ...; got "Acme.COM"`.
 */
export function parseInventory(text: string, source = "tenants.yaml", folder = process.cwd()): Inventory {
  const lines = new LineCounter();
  // Plain messages: the pretty ones quote the source over several lines; one line a problem reads better in a preview.
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new InventoryError(
      document.errors.map((error) => {
        const { line, col } = lines.linePos(error.pos[0]);
        return `${source}: line ${line}, column ${col}: ${error.message}`;
      }),
    );
  }
  const raw = withDefaults(document.toJS());
  const parsed = InventoryFile.safeParse(raw, { error: defaultMessage });
  if (!parsed.success) throw new InventoryError(problemsOf(source, raw, parsed.error.issues));
  return {
    source,
    folder,
    tenants: parsed.data.tenants.map((tenant, index) => ({
      ...tenant,
      key: keyOf(tenant),
      label: `tenant "${tenant.name}" (tenants[${index}])`,
    })),
    offboard: parsed.data.offboard,
  };
}

/**
 * The domain's ramp, its tenant's (and the defaults') keys where it does not
 * set its own; undefined where the file gives it none, or where the record is
 * not the fleet's to move (inherited by a hosted or `dns: none` domain).
 */
export function domainPolicyOf(tenant: InventoryTenant, domainName: string): DomainPolicy | undefined {
  const entry = domainPolicyEntryOf(tenant, domainName);
  return entry && resolvePolicy(entry);
}

/** The domain's ramp as the file gives it, merged from its tenant and the defaults, as a `Tenant`'s domain takes it. */
export function domainPolicyEntryOf(tenant: InventoryTenant, domainName: string): DomainPolicyEntry | undefined {
  const domain = tenant.domains.find((candidate) => candidate.name === domainName);
  if (domain === undefined || (!domain.policy && !tenant.policy) || hostedReason(tenant, domain)) return undefined;
  return mergeRules<DomainPolicyEntry>(tenant.policy, domain.policy ?? {});
}
