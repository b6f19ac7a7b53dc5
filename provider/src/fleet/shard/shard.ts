import { createHash, createHmac, randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ConfigMap,
  LocalWorkspace,
  type LocalWorkspaceOptions,
  type PulumiCommand,
  type PulumiFn,
  type Stack,
  StackAlreadyExistsError,
  StackNotFoundError,
} from "@pulumi/pulumi/automation";
import type { Plan } from "../../api";
import { type Deployment, resourceName, resourcesOf } from "../../checkpoint/deployment";
import { type Interruption, interruptionOf } from "../../checkpoint/interruption";
import { stateBackendEnv } from "../../checkpoint/postgresBackend";
import { type DeclareOptions, declareTenants, inventoryTenantPlan } from "../../inventory/declare";
import {
  type DnsPublishing,
  domainPolicyOf,
  type Inventory,
  InventoryError,
  type InventoryTenant,
} from "../../inventory/inventory";
import { publisherDigest } from "../../inventory/publisher";
import { packageVersion } from "../../runtime/providerModule";
import { readTextIfAny } from "../../runtime/readText";
import { stageName } from "../../tenant/policy";
import { isTenantType, type TenantHolding, tenantHoldingsOf } from "./tenantHoldings";
import type { LastUp } from "./upMark";

/** Where the shard stacks live and how a workspace reaches them: what every workspace of the fleet is made from. */
export interface ShardBackend {
  /** Pulumi project name of every shard stack. */
  projectName: string;
  /** The folder whose node_modules holds pulumi-dmarc-partner: the providers of every shard load it from there. */
  projectDir: string;
  /** Where the runner keeps per-shard work folders and logs. */
  stateDir: string;
  /** Backend URL; default the one the user is logged in to. */
  backendUrl?: string;
  /** Secrets provider of new shard stacks, as `pulumi stack init --secrets-provider` takes it; default the backend's. */
  secretsProvider?: string;
  /** Extra environment for the Pulumi CLI. */
  env: Record<string, string>;
}

/** What the shards' programs declare their tenants from. */
export interface ShardTenants {
  inventory: Inventory;
  /** DNS publishing and verification hooks for the tenants, for Automation API users. */
  declare?: Omit<DeclareOptions, "plans">;
}

/** Everything every shard stack shares. */
export interface FleetProject extends ShardBackend, ShardTenants {
  /** Stack configuration applied to every shard (`dmarc:*` and any other). */
  config: ConfigMap;
}

/** How a record is published, as the digest holds it: a publisher module by its content too, so an edit counts. */
function publishingDigest(inventory: Inventory, publishing: DnsPublishing): unknown {
  if (publishing === "none" || !("publisher" in publishing)) return publishing;
  try {
    return { ...publishing, content: publisherDigest(inventory.folder, publishing.publisher) };
  } catch (error) {
    throw new InventoryError([`${inventory.source}: dns.publisher: ${(error as Error).message}`]);
  }
}

/**
 * The policy tags each domain's record carries, when any domain has a ramp:
 * a move changes the shard's digest, and only its shard runs. Left out
 * otherwise, so shards without ramps keep the digest they deployed with.
 */
function policiesDigest(tenant: InventoryTenant): { policies?: unknown[] } {
  const policies = tenant.domains.map((domain) => {
    const policy = domainPolicyOf(tenant, domain.name);
    return policy ? { stage: stageName(policy.stage), sp: policy.sp ?? null } : null;
  });
  return policies.some((policy) => policy !== null) ? { policies } : {};
}

/**
 * What a shard's `up` deploys, as one hash: its tenants'
 * plans, the objects each declares (not their place in the file, so
 * inserting a tenant elsewhere does not touch this shard), how each domain's
 * record is published, and the package version.
 */
export function shardDigest(inventory: Inventory, keys: readonly string[]): string {
  const entries = inventory.tenants
    .filter((tenant) => keys.includes(tenant.key))
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((tenant) => ({
      key: tenant.key,
      plan: inventoryTenantPlan(inventory, tenant),
      // Publishing a record is the inventory's hook beside the Tenant, not an object of its plan.
      dns: tenant.domains.map((domain) => publishingDigest(inventory, domain.dns ?? tenant.dns ?? "none")),
      ...policiesDigest(tenant),
    }));
  return createHash("sha256")
    .update(JSON.stringify({ version: packageVersion(), entries }))
    .digest("hex")
    .slice(0, 16);
}

/**
 * The Pulumi program of one shard: its tenants. Outputs per tenant key:
 * organisation id, subscription status, records to publish, webhook secrets
 * (secret) and every object's id. The shard's digest is not among them: the
 * runner records it in the shard's `up` mark once the whole `up` succeeded.
 */
export function shardProgram(
  shardTenants: ShardTenants,
  keys: readonly string[],
  plans: readonly Plan[] | undefined,
): PulumiFn {
  return async () => {
    if (keys.length === 0) return { tenants: {} };
    const declare = { ...shardTenants.declare, ...(plans ? { plans: [...plans] } : {}) };
    const tenants = declareTenants(shardTenants.inventory, declare, new Set(keys));
    return {
      tenants: Object.fromEntries(
        tenants.map((tenant) => [
          tenant.key,
          {
            organizationId: tenant.organizationId,
            subscriptionStatus: tenant.subscriptionStatus,
            records: tenant.records,
            webhookSecrets: tenant.webhookSecrets,
            ids: tenant.ids,
          },
        ]),
      ),
    };
  };
}

/**
 * A work folder of the shard's own (its Pulumi.yaml and config file), whose
 * node_modules is the project's: the shard's provider process resolves the
 * package from there, as it would in the project itself.
 */
function workDirFor(backend: ShardBackend, stackName: string): string {
  const folder = join(backend.stateDir, "work", stackName);
  mkdirSync(folder, { recursive: true });
  const modules = join(folder, "node_modules");
  // lstat, not exists: a link made while the project had no node_modules yet dangles, and stays valid once it has.
  if (!lstatSync(modules, { throwIfNoEntry: false }))
    symlinkSync(join(backend.projectDir, "node_modules"), modules, "dir");
  return folder;
}

/**
 * How often the shards' engines collect garbage, as Go's GOGC: each step
 * re-encodes the whole checkpoint, so at Go's default (100) an engine spends
 * a fifth or more of its CPU collecting those short-lived buffers. At 400 it
 * collects a quarter as often, for a larger peak; bench/README.md has both.
 */
const SHARD_ENGINE_GOGC = "400";

/** The shards' engines' collector: {@link SHARD_ENGINE_GOGC}, unless the runner's environment sets GOGC itself. */
export function engineCollectorEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return env.GOGC ? {} : { GOGC: SHARD_ENGINE_GOGC };
}

/** `pulumi`: the CLI already found and checked, so the workspace does not run `pulumi version` again. */
export function workspaceOptions(
  backend: ShardBackend,
  stackName: string,
  pulumi?: PulumiCommand,
): LocalWorkspaceOptions {
  return {
    ...(pulumi ? { pulumiCommand: pulumi } : {}),
    workDir: workDirFor(backend, stackName),
    envVars: {
      ...engineCollectorEnv(),
      ...stateBackendEnv(backend.backendUrl ?? backend.env.PULUMI_BACKEND_URL),
      ...backend.env,
    },
    projectSettings: {
      name: backend.projectName,
      runtime: "nodejs",
      ...(backend.backendUrl ? { backend: { url: backend.backendUrl } } : {}),
    },
    ...(backend.secretsProvider ? { secretsProvider: backend.secretsProvider } : {}),
  };
}

/**
 * The shard's stack running `program`: selected when the scan found it,
 * else created straight away (`stack init`), which saves a new shard the
 * `stack select` that would fail first. Should another runner have created
 * or removed it since the scan, the other way is tried.
 */
export async function shardStack(
  backend: ShardBackend,
  stackName: string,
  program: PulumiFn,
  exists: boolean,
  pulumi?: PulumiCommand,
): Promise<Stack> {
  const args = { stackName, projectName: backend.projectName, program };
  const options = workspaceOptions(backend, stackName, pulumi);
  const select = () => LocalWorkspace.selectStack(args, options);
  const create = () => LocalWorkspace.createStack(args, options);
  if (exists)
    return select().catch((error) => (error instanceof StackNotFoundError ? create() : Promise.reject(error)));
  return create().catch((error) => (error instanceof StackAlreadyExistsError ? select() : Promise.reject(error)));
}

/** In a shard's work folder: what this folder last wrote to its stack's configuration. */
const CONFIG_MARK = ".dmarc-fleet-config.json";

interface ConfigMark {
  /** The HMAC key of this folder's own, so that the mark holds no secret value, not even its plain hash. */
  key: string;
  digest: string;
}

function readMark(path: string): ConfigMark | undefined {
  try {
    const mark = JSON.parse(readTextIfAny(path) ?? "") as Partial<ConfigMark>;
    return typeof mark.key === "string" && typeof mark.digest === "string" ? (mark as ConfigMark) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `config` to the shard's stack (`pulumi config set-all`, one more
 * CLI process) unless this work folder's last write was the same
 * configuration and the stack's settings file is still exactly what that
 * write left: a rerun over existing shards then skips it. Returns whether it
 * wrote.
 */
export async function applyConfig(stack: Stack, config: ConfigMap): Promise<boolean> {
  const workDir = stack.workspace.workDir;
  const markPath = join(workDir, CONFIG_MARK);
  const settingsPath = join(workDir, `Pulumi.${stack.name}.yaml`);
  const entries = JSON.stringify(Object.entries(config).sort(([a], [b]) => a.localeCompare(b)));
  const digestOf = (key: string, settings: string | undefined) =>
    createHmac("sha256", Buffer.from(key, "hex"))
      .update(JSON.stringify([stack.name, entries, settings ?? null]))
      .digest("hex");
  const mark = readMark(markPath);
  if (mark && mark.digest === digestOf(mark.key, readTextIfAny(settingsPath))) return false;
  await stack.setAllConfig(config);
  const key = mark?.key ?? randomBytes(32).toString("hex");
  const next: ConfigMark = { key, digest: digestOf(key, readTextIfAny(settingsPath)) };
  writeFileSync(markPath, `${JSON.stringify(next)}\n`, { mode: 0o600 });
  return true;
}

/** What the backend holds for one shard. */
export interface ShardState {
  name: string;
  /** Keys of the Tenant components in its state. */
  tenants: string[];
  /**
   * The digest its last `up` deployed, from its `up` mark (the `dmarc-fleet:up`
   * tag), when that `up` succeeded; when the scan read marks.
   */
  digest?: string;
  /** What its last `up` came to, from its `up` mark, when the scan read marks; none for a shard no `up` of this version ran. */
  lastUp?: LastUp;
  interruption?: Interruption;
  /** What it holds of each tenant, by key. */
  holdings: Record<string, TenantHolding>;
  /** Its drift mark (`drift` or `refresh` found drift no `up` has healed yet), when the scan read marks. */
  driftMark?: string;
  /** When an operation last found its state equal to the service (a "none" drift mark), when the scan read marks. */
  checkedAt?: string;
}

export function shardStateOf(name: string, deployment: Deployment): ShardState {
  const resources = resourcesOf(deployment);
  const tenants = resources
    .filter((resource) => isTenantType(resource.type))
    .map((resource) => resourceName(resource.urn));
  const interruption = interruptionOf(deployment);
  return {
    name,
    tenants,
    holdings: tenantHoldingsOf(resources),
    ...(interruption ? { interruption } : {}),
  };
}
