import type { Writable } from "node:stream";
import { LocalWorkspace, PulumiCommand, type StackSummary, type TagMap } from "@pulumi/pulumi/automation";
import { type BackendDeclarations, backendDeclarations } from "../../checkpoint/backendRecords";
import type { Deployment } from "../../checkpoint/deployment";
import { fileBackendFolder, projectStackNames } from "../../checkpoint/fileBackend";
import { fileStack } from "../../checkpoint/fileStack";
import { brokenCheckpoints } from "../../checkpoint/repair";
import type { StackRecovery } from "../../recovery/shard";
import { cliListing } from "../../recovery/stack";
import { runPool } from "../pool";
import { checkedAtIn, driftFoundIn } from "../shard/driftMark";
import { type ShardBackend, type ShardState, shardStateOf, workspaceOptions } from "../shard/shard";
import { lastUpIn } from "../shard/upMark";
import { shardNumber } from "./assignment";
import { describeStack } from "./ownership";

// What the backend holds of a fleet: each shard stack's state, read from a
// file backend's files, else with the CLI, and no engine operation. The runner starts from it; the import
// reads it to leave alone what the shards hold.

function stackNameOf(listed: string): string {
  return listed.slice(listed.lastIndexOf("/") + 1);
}

/** What a scan reads the fleet's shards from. */
export interface FleetScan {
  /** Stem of the shard stacks' names. */
  fleet: string;
  backend: ShardBackend;
  /** Settles a shard whose checkpoint a killed run cut short; without it, such a shard is left to fail. */
  recover?: StackRecovery;
  /** Where the scan says what it recovered. */
  progress: Writable;
}

/** The CLI, found and checked as each workspace would: its version checked unless the environment given says not to. */
export function pulumiCommand(env: Record<string, string>): Promise<PulumiCommand> {
  return PulumiCommand.get({ skipVersionCheck: Boolean(env.PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK) });
}

/**
 * The folder of the file backend a workspace's stacks are in, the one
 * configured (an option or the workspace's environment) first, then the
 * process's, then the one it is logged in to; undefined for another backend.
 */
export async function backendFolderOf(
  workspace: LocalWorkspace,
  configured: string | undefined,
): Promise<string | undefined> {
  return fileBackendFolder(await backendUrlOf(workspace, configured));
}

/** The URL of the backend a workspace's stacks are in: the one configured, the process's, else the one it is logged in to. */
async function backendUrlOf(workspace: LocalWorkspace, configured: string | undefined): Promise<string | undefined> {
  return configured ?? process.env.PULUMI_BACKEND_URL ?? (await workspace.whoAmI()).url;
}

/** Recovers the shards whose checkpoint a killed run cut short: the backend could not load them. */
async function recoverBrokenShards(
  scan: FleetScan,
  recover: StackRecovery,
  folder: string,
  names: readonly string[],
): Promise<void> {
  const { fleet, backend } = scan;
  const shards = names.filter((name) => shardNumber(fleet, name) !== undefined);
  for (const { stackName, file } of brokenCheckpoints(folder, backend.projectName, shards)) {
    const workDir = workspaceOptions(backend, stackName).workDir as string;
    const reason = { kind: "brokenCheckpoint", file } as const;
    const outcome = await recover({ stackName, workDir, env: backend.env, reason });
    scan.progress.write(`${stackName}: its checkpoint was cut short; recovered first: ${outcome.summary}\n`);
  }
}

/** Listings tried, and the pause after a failed one. */
const LISTING_ATTEMPTS = 4;
const LISTING_PAUSE_MS = 750;

/** The backend's stacks as the CLI lists them, asked again a few times when the listing fails. */
async function listedStacks(workspace: LocalWorkspace): Promise<StackSummary[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await workspace.listStacks();
    } catch (error) {
      if (attempt === LISTING_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, LISTING_PAUSE_MS * attempt));
    }
  }
}

/**
 * The names of the project's stacks. In a file backend they are its
 * checkpoint files, read from the folder: the CLI's listing reads every
 * stack's checkpoint and fails while another run writes one, or while a
 * killed run left one cut short; the fleet's shards left so are recovered
 * first. Other backends are asked through the CLI.
 */
async function stackNames(scan: FleetScan, workspace: LocalWorkspace): Promise<{ names: string[]; folder?: string }> {
  const { backend } = scan;
  const folder = await backendFolderOf(workspace, backend.backendUrl ?? backend.env.PULUMI_BACKEND_URL);
  const names = folder === undefined ? undefined : projectStackNames(folder, backend.projectName);
  if (folder === undefined || names === undefined) {
    return { names: (await listedStacks(workspace)).map((summary) => stackNameOf(summary.name)) };
  }
  if (scan.recover) await recoverBrokenShards(scan, scan.recover, folder, names);
  return { names, folder };
}

/** A shard stack's state and tags: from a file backend's files where they can be read, else from the CLI. */
async function stateAndTags(
  workspace: LocalWorkspace,
  projectName: string,
  folder: string | undefined,
  name: string,
): Promise<{ state: Deployment; tags: () => Promise<TagMap> }> {
  const read = folder === undefined ? undefined : fileStack(folder, projectName, name);
  if (read) return { state: read.state, tags: async () => read.tags };
  return { state: await workspace.exportStack(name), tags: () => workspace.listTags(name) };
}

/**
 * Every shard stack of the fleet in the backend, with what its state holds;
 * with `readMarks`, also its tags (one CLI process per shard): its drift
 * mark, and its `up` mark, which gives the digest its last successful `up`
 * deployed.
 */
export async function scanFleet(
  scan: FleetScan,
  pulumi: PulumiCommand,
  concurrency: number,
  readMarks: boolean,
): Promise<Map<number, ShardState>> {
  const { fleet, backend } = scan;
  const workspace = await LocalWorkspace.create(workspaceOptions(backend, `${fleet}.scan`, pulumi));
  const { names, folder } = await stackNames(scan, workspace);
  const numbered = names
    .map((name) => ({ name, number: shardNumber(fleet, name) }))
    .filter((entry): entry is { name: string; number: number } => entry.number !== undefined);
  const states = await runPool(numbered, concurrency, async ({ name }) => {
    const stack = await stateAndTags(workspace, backend.projectName, folder, name);
    const state = shardStateOf(name, stack.state);
    if (!readMarks) return state;
    const tags = await stack.tags();
    const mark = driftFoundIn(tags);
    const checkedAt = checkedAtIn(tags);
    return {
      ...state,
      ...lastUpIn(tags),
      ...(mark ? { driftMark: mark } : {}),
      ...(checkedAt ? { checkedAt } : {}),
    };
  });
  return new Map(numbered.map((entry, index) => [entry.number, states[index] as ShardState]));
}

/** The ids of the organisations a shard's state holds, one per tenant. */
export function organizationIdsOf(state: ShardState): string[] {
  return Object.values(state.holdings).flatMap((holding) => (holding.organizationId ? [holding.organizationId] : []));
}

/**
 * What the backend holds: each organisation id the fleet's shards record,
 * with its shard's name, and those every other stack records, with that
 * stack; each tenant key in the fleet's shards, with its shard's name.
 */
export interface FleetHoldings {
  organizations: Map<string, string>;
  keys: Map<string, string>;
}

/** Reads every stack of the backend, the fleet's shards and the others, and runs nothing. */
export async function fleetHoldings(scan: FleetScan, concurrency: number): Promise<FleetHoldings> {
  const pulumi = await pulumiCommand(scan.backend.env);
  const states = await scanFleet(scan, pulumi, concurrency, false);
  const holdings: FleetHoldings = { organizations: new Map(), keys: new Map() };
  for (const [, declarations] of (await otherStacks(scan, pulumi)).organizations) {
    for (const { id, stack } of declarations) if (id) holdings.organizations.set(id, describeStack(stack));
  }
  for (const state of states.values()) {
    for (const id of organizationIdsOf(state)) holdings.organizations.set(id, state.name);
    for (const key of state.tenants) holdings.keys.set(key, state.name);
  }
  return holdings;
}

/** Whether a stack, as the backend names it (`<project>/<stack>`, `<org>/<project>/<stack>` or `<stack>`), is one of the fleet's shards. */
function isFleetShard(scan: FleetScan, name: string): boolean {
  const parts = name.split("/");
  const project = parts.length > 1 ? parts.at(-2) : scan.backend.projectName;
  return project === scan.backend.projectName && shardNumber(scan.fleet, parts.at(-1) ?? "") !== undefined;
}

/**
 * What every other stack of the fleet's backend declares and records: other
 * fleets' shards, other projects' stacks, programs' stacks. Read from a file
 * backend's files or a PostgreSQL backend's rows directly, else through the
 * CLI; the fleet's own shards are left out, {@link scanFleet} reads them.
 */
export async function otherStacks(scan: FleetScan, pulumi: PulumiCommand): Promise<BackendDeclarations> {
  const { fleet, backend } = scan;
  const workspace = await LocalWorkspace.create(workspaceOptions(backend, `${fleet}.scan`, pulumi));
  const backendUrl = await backendUrlOf(workspace, backend.backendUrl ?? backend.env.PULUMI_BACKEND_URL);
  const listing = cliListing(pulumi.command, workspace.workDir, { ...process.env, ...workspace.envVars });
  return backendDeclarations(backendUrl, listing, (name) => isFleetShard(scan, name));
}
