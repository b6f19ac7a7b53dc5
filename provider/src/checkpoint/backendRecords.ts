import { existsSync } from "node:fs";
import { isPostgresUrl } from "../client";
import { dmarcTypeName, pluginTypeName } from "../runtime/typeToken";
import { EXAMPLE_TENANT_TYPE, TENANT_TYPE } from "../tenant/tenant";
import { type CheckpointFile, readJson, stateOf } from "./checkpointFile";
import {
  type Deployment,
  isProviderType,
  pendingOperations,
  resourceName,
  resourcesOf,
  type StateResource,
} from "./deployment";
import { everyStackFile, fileBackendFolder } from "./fileBackend";
import { readPostgresCheckpoints } from "./postgresBackend";
import { findCheckpointRepair } from "./repair";

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
  /** Every stack of the backend, of every project, as `pulumi stack ls --all` names them. */
  listAllStacks(): Promise<string[]>;
  /** A stack's state, by the name {@link listAllStacks} gave it. */
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

/** Which stacks a read leaves out, by the name the backend gives them: none unless told. */
type Skip = (name: string) => boolean;

function fileStacks(folder: string, skip: Skip): StackRead[] {
  const files = everyStackFile(folder).filter(({ name }) => !skip(name));
  return files.map(({ name, file }) => {
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

async function postgresStacks(backendUrl: string, skip: Skip): Promise<StackRead[]> {
  const rows = (await readPostgresCheckpoints(backendUrl)).filter(({ name }) => !skip(name));
  return rows.map(({ name, text }) => {
    try {
      return { name, state: stateOf(JSON.parse(text) as CheckpointFile) };
    } catch (error) {
      return { name, unreadable: (error as Error).message };
    }
  });
}

async function listedStacks(listing: BackendListing, skip: Skip): Promise<StackRead[]> {
  const reads: StackRead[] = [];
  for (const name of (await listing.listAllStacks()).filter((listed) => !skip(listed))) {
    try {
      reads.push({ name, state: await listing.exportOther(name) });
    } catch (error) {
      reads.push({ name, unreadable: (error as Error).message.split("\n")[0] ?? "" });
    }
  }
  return reads;
}

function stacksOf(
  backendUrl: string | undefined,
  listing: BackendListing,
  skip: Skip,
): Promise<StackRead[]> | StackRead[] {
  const folder = fileBackendFolder(backendUrl);
  if (folder !== undefined) return fileStacks(folder, skip);
  if (isPostgresUrl(backendUrl)) return postgresStacks(backendUrl as string, skip);
  return listedStacks(listing, skip);
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

/** Where a stack declares a tenant or an organisation: the stack, the resource's URN, and the object's id once made. */
export interface Declaration extends Recorder {
  id?: string;
  /** A create the stack began and never finished. */
  pending: boolean;
}

/** What the stacks of a backend declare, besides the ids they record: tenants by key, organisations by name. */
export interface BackendDeclarations extends Omit<BackendRecords, "pendingCreates"> {
  /** Each Tenant component's key (its resource name), with every stack declaring it. */
  tenants: ReadonlyMap<string, readonly Declaration[]>;
  /** Each Organization's name (its `name` input), with every stack declaring it, pending creates included. */
  organizations: ReadonlyMap<string, readonly Declaration[]>;
}

/** The Tenant component's type, as a program on this package or the example's older stacks record it. */
const TENANT_TYPES: ReadonlySet<string> = new Set([TENANT_TYPE, EXAMPLE_TENANT_TYPE]);

const isOrganization = (type: string) => (dmarcTypeName(type) ?? pluginTypeName(type)) === "Organization";

function declare(into: Map<string, Declaration[]>, key: string, declaration: Declaration): void {
  into.set(key, [...(into.get(key) ?? []), declaration]);
}

/** The tenants and organisations one stack's state declares, added to `into`. */
function addDeclarations(
  into: { tenants: Map<string, Declaration[]>; organizations: Map<string, Declaration[]> },
  stack: string,
  state: Deployment,
): void {
  const entries = [
    ...resourcesOf(state).map((resource) => ({ resource, pending: false })),
    ...pendingOperations(state)
      .filter((operation) => operation.type === "creating")
      .map((operation) => ({ resource: operation.resource, pending: true })),
  ];
  for (const { resource, pending } of entries) {
    const declaration = { stack, urn: resource.urn, pending, ...(resource.id ? { id: resource.id } : {}) };
    if (TENANT_TYPES.has(resource.type)) declare(into.tenants, resourceName(resource.urn), declaration);
    const name = resource.inputs?.name;
    if (isOrganization(resource.type) && typeof name === "string") declare(into.organizations, name, declaration);
  }
}

/** Every stack of the backend but those `skip` leaves out: what each records, left pending and declares. */
async function readBackend(
  backendUrl: string | undefined,
  listing: BackendListing,
  skip: Skip,
): Promise<BackendRecords & BackendDeclarations> {
  const records = {
    recordedBy: new Map<string, Recorder>(),
    pendingCreates: [] as PendingElsewhere[],
    unreadable: [] as string[],
    stacksRead: 0,
    tenants: new Map<string, Declaration[]>(),
    organizations: new Map<string, Declaration[]>(),
  };
  for (const read of await stacksOf(backendUrl, listing, skip)) {
    if ("unreadable" in read) {
      records.unreadable.push(`${read.name} (${read.unreadable})`);
      continue;
    }
    records.stacksRead++;
    if (!read.state) continue;
    addStack(records, read.name, read.state);
    addDeclarations(records, read.name, read.state);
  }
  return records;
}

/** Every other stack's records on the backend `backendUrl`: what recovery weighs a pending create against. */
export async function backendRecords(
  backendUrl: string | undefined,
  listing: BackendListing,
  own: OwnStack,
): Promise<BackendRecords> {
  const {
    tenants: _tenants,
    organizations: _organizations,
    ...records
  } = await readBackend(backendUrl, listing, (name) => isOwn(name, own));
  return records;
}

/**
 * What every stack of the backend `backendUrl` declares and records, but
 * those `skip` leaves out (the ones the caller reads itself): each tenant's
 * key, each organisation's name, each object's id. The fleet refuses a
 * tenant another stack declares, and an offboarding that would delete what
 * another stack records.
 */
export async function backendDeclarations(
  backendUrl: string | undefined,
  listing: BackendListing,
  skip: Skip,
): Promise<BackendDeclarations> {
  const { pendingCreates: _pending, ...declarations } = await readBackend(backendUrl, listing, skip);
  return declarations;
}
