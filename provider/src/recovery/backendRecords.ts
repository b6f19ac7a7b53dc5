import { existsSync } from "node:fs";
import { type CheckpointFile, readJson, stateOf } from "../checkpoint/checkpointFile";
import {
  type Deployment,
  isProviderType,
  pendingOperations,
  resourcesOf,
  type StateResource,
} from "../checkpoint/deployment";
import { everyStackFile, fileBackendFolder } from "../checkpoint/fileBackend";
import { findCheckpointRepair } from "../checkpoint/repair";
import { isPostgresUrl } from "../client";
import { readPostgresCheckpoints } from "./postgresState";

// Who records what on a state backend: every stack's state, of every
// project, read once. The service gives an object no owner, tag or
// idempotency key, so "no other stack records it" is part of what proves an
// object is a stack's own: recovery never adopts an object another stack
// records, and the fleet never runs a tenant another stack holds. A file
// backend's checkpoints and a PostgreSQL backend's rows are read directly
// (one stack's file, one query); any other backend through the CLI, one
// export per stack.

/** A stack of the backend that records an object: its name and the resource's URN there. */
export interface Recorder {
  stack: string;
  urn: string;
}

/** A create another stack began and never finished: it may have made an object too. */
interface PendingElsewhere extends Recorder {
  resource: StateResource;
}

export interface BackendRecords {
  /** Each id another stack records, with the first stack recording it. */
  recordedBy: ReadonlyMap<string, Recorder>;
  /** The creates other stacks left pending. */
  pendingCreates: readonly PendingElsewhere[];
  /** Stacks that could not be read, with why: what they record cannot be ruled out. */
  unreadable: readonly string[];
  /** How many other stacks were read. */
  stacksRead: number;
}

/** How the backend is read where its files or rows cannot be: the CLI. */
export interface BackendListing {
  listAllStacks(): Promise<string[]>;
  exportOther(name: string): Promise<Deployment>;
}

/** Whose records to leave out: the stack being recovered, whose own state is in hand. */
export interface OwnStack {
  projectName: string;
  /** The stack's name as `--stack` took it: `dev`, or `org/project/dev`. */
  stackName: string;
}

/** One stack as read: its state (none for a stack no run has written yet), or why it could not be read. */
type StackRead = { name: string; state: Deployment | undefined } | { name: string; unreadable: string };

function isOwn(name: string, own: OwnStack): boolean {
  const short = own.stackName.slice(own.stackName.lastIndexOf("/") + 1);
  return name === short || name.endsWith(`/${own.projectName}/${short}`) || name === `${own.projectName}/${short}`;
}

function fileStacks(folder: string): StackRead[] {
  return everyStackFile(folder).map(({ name, file }) => {
    try {
      const repair = findCheckpointRepair([file]);
      const state = repair?.state ?? stateOf(readJson<CheckpointFile>(file) ?? readJson<CheckpointFile>(`${file}.gz`));
      return { name, state };
    } catch (error) {
      // A stack removed while it was read records nothing any more.
      return existsSync(file) ? { name, unreadable: (error as Error).message } : { name, state: undefined };
    }
  });
}

async function postgresStacks(backendUrl: string): Promise<StackRead[]> {
  return (await readPostgresCheckpoints(backendUrl)).map(({ name, text }) => {
    try {
      return { name, state: stateOf(JSON.parse(text) as CheckpointFile) };
    } catch (error) {
      return { name, unreadable: (error as Error).message };
    }
  });
}

async function listedStacks(listing: BackendListing): Promise<StackRead[]> {
  const reads: StackRead[] = [];
  for (const name of await listing.listAllStacks()) {
    try {
      reads.push({ name, state: await listing.exportOther(name) });
    } catch (error) {
      reads.push({ name, unreadable: (error as Error).message.split("\n")[0] ?? "" });
    }
  }
  return reads;
}

function stacksOf(backendUrl: string | undefined, listing: BackendListing): Promise<StackRead[]> | StackRead[] {
  const folder = fileBackendFolder(backendUrl);
  if (folder !== undefined) return fileStacks(folder);
  if (isPostgresUrl(backendUrl)) return postgresStacks(backendUrl as string);
  return listedStacks(listing);
}

/** What one other stack records and left pending, added to `records`. */
function addStack(
  records: BackendRecords & { recordedBy: Map<string, Recorder>; pendingCreates: PendingElsewhere[] },
  stack: string,
  state: Deployment,
): void {
  const entries = [...resourcesOf(state), ...pendingOperations(state).map((operation) => operation.resource)];
  for (const resource of entries) {
    if (resource.id && !isProviderType(resource.type) && !records.recordedBy.has(resource.id)) {
      records.recordedBy.set(resource.id, { stack, urn: resource.urn });
    }
  }
  for (const operation of pendingOperations(state)) {
    if (operation.type === "creating") {
      records.pendingCreates.push({ stack, urn: operation.resource.urn, resource: operation.resource });
    }
  }
}

/** Every other stack's records on the backend `backendUrl`. */
export async function backendRecords(
  backendUrl: string | undefined,
  listing: BackendListing,
  own: OwnStack,
): Promise<BackendRecords> {
  const records = {
    recordedBy: new Map<string, Recorder>(),
    pendingCreates: [] as PendingElsewhere[],
    unreadable: [] as string[],
    stacksRead: 0,
  };
  for (const read of await stacksOf(backendUrl, listing)) {
    if (isOwn(read.name, own)) continue;
    if ("unreadable" in read) {
      records.unreadable.push(`${read.name} (${read.unreadable})`);
      continue;
    }
    records.stacksRead++;
    if (read.state) addStack(records, read.name, read.state);
  }
  return records;
}
