import { availableParallelism } from "node:os";
import { LocalWorkspace, PulumiCommand, type StackSummary } from "@pulumi/pulumi/automation";
import { fileBackendFolder } from "../checkpoint/fileBackend";
import { brokenCheckpoints } from "../checkpoint/repair";
import { shardNumber } from "./assignment";
import { checkedAtIn, driftFoundIn } from "./driftMark";
import type { FleetOptions } from "./fleetOptions";
import { runPool } from "./pool";
import { type ShardState, shardStateOf, workspaceOptions } from "./shard";

// What the backend holds of a fleet: each shard stack's state, read with
// one CLI and no engine operation. The runner starts from it; the import
// reads it to leave alone what the shards hold.

function stackNameOf(listed: string): string {
  return listed.slice(listed.lastIndexOf("/") + 1);
}

/** The CLI, found and checked as each workspace would: its version checked unless the environment given says not to. */
export function pulumiCommand(options: FleetOptions): Promise<PulumiCommand> {
  return PulumiCommand.get({ skipVersionCheck: Boolean(options.env.PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK) });
}

export function concurrencyOf(options: FleetOptions): number {
  return Math.max(1, options.concurrency ?? availableParallelism());
}

/**
 * The shards whose checkpoint a killed run cut short: the file backend lists
 * no stack at all while one is, so the recovery settles them first.
 */
async function recoverBrokenShards(options: FleetOptions, workspace: LocalWorkspace): Promise<number> {
  const folder = fileBackendFolder(options.backendUrl ?? (await workspace.whoAmI()).url);
  const broken = folder ? brokenCheckpoints(folder, options.projectName) : [];
  const shards = broken.filter(({ stackName }) => shardNumber(options.fleet, stackName) !== undefined);
  for (const { stackName, file } of shards) {
    const workDir = workspaceOptions(options, stackName).workDir as string;
    const outcome = await options.recover?.({
      stackName,
      workDir,
      env: options.env,
      reason: { kind: "brokenCheckpoint", file },
    });
    (options.progress ?? process.stderr).write(
      `${stackName}: its checkpoint was cut short; recovered first: ${outcome?.summary}\n`,
    );
  }
  return shards.length;
}

/** Listings tried before a failing one is taken for a checkpoint cut short, and the pause after each. */
const LISTING_ATTEMPTS = 4;
const LISTING_PAUSE_MS = 750;

/**
 * The backend's stacks. The file backend reads every stack's attributes to
 * list them, and another run writing one at that moment makes the listing
 * fail (`error: EOF`): it is asked again a few times. A failure that stays is
 * a checkpoint a killed run cut short: the fleet's shards that have one are
 * recovered, then the list is asked once more.
 */
async function listedStacks(options: FleetOptions, workspace: LocalWorkspace): Promise<StackSummary[]> {
  let failure: unknown;
  for (let attempt = 1; attempt <= LISTING_ATTEMPTS; attempt++) {
    try {
      return await workspace.listStacks();
    } catch (error) {
      failure = error;
      await new Promise((resolve) => setTimeout(resolve, LISTING_PAUSE_MS * attempt));
    }
  }
  if (!options.recover || (await recoverBrokenShards(options, workspace)) === 0) throw failure;
  return workspace.listStacks();
}

/** Every shard stack of the fleet in the backend, with what its state holds (and its drift mark, for `readMarks`). */
export async function scanFleet(
  options: FleetOptions,
  pulumi: PulumiCommand,
  concurrency: number,
  readMarks: boolean,
): Promise<Map<number, ShardState>> {
  const workspace = await LocalWorkspace.create(workspaceOptions(options, `${options.fleet}.scan`, pulumi));
  const numbered = (await listedStacks(options, workspace))
    .map((summary) => stackNameOf(summary.name))
    .map((name) => ({ name, number: shardNumber(options.fleet, name) }))
    .filter((entry): entry is { name: string; number: number } => entry.number !== undefined);
  const states = await runPool(numbered, concurrency, async ({ name }) => {
    const state = shardStateOf(name, await workspace.exportStack(name));
    if (!readMarks) return state;
    const tags = await workspace.listTags(name);
    const mark = driftFoundIn(tags);
    const checkedAt = checkedAtIn(tags);
    return { ...state, ...(mark ? { driftMark: mark } : {}), ...(checkedAt ? { checkedAt } : {}) };
  });
  return new Map(numbered.map((entry, index) => [entry.number, states[index] as ShardState]));
}

/** The ids of the organisations a shard's state holds, one per tenant. */
export function organizationIdsOf(state: ShardState): string[] {
  return Object.values(state.holdings).flatMap((holding) => (holding.organizationId ? [holding.organizationId] : []));
}

/** What the fleet's shards hold: each organisation id and tenant key in their state, with its shard's name. */
export interface FleetHoldings {
  organizations: Map<string, string>;
  keys: Map<string, string>;
}

/** Reads every shard stack of the fleet from the backend, and runs nothing. */
export async function fleetHoldings(options: FleetOptions): Promise<FleetHoldings> {
  const states = await scanFleet(options, await pulumiCommand(options), concurrencyOf(options), false);
  const holdings: FleetHoldings = { organizations: new Map(), keys: new Map() };
  for (const state of states.values()) {
    for (const id of organizationIdsOf(state)) holdings.organizations.set(id, state.name);
    for (const key of state.tenants) holdings.keys.set(key, state.name);
  }
  return holdings;
}
