import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Where the file backend (`file://` URLs, `pulumi login --local`) keeps a
// stack's checkpoint and locks, as Pulumi's `diy` backend lays them out:
// `.pulumi/stacks/<project>/<stack>.json` and
// `.pulumi/locks/organization/<project>/<stack>/<lock id>.json`, or without
// the project part for stacks of the older, project-less layout.

export interface StackFiles {
  /** Candidate checkpoint files, the project-scoped layout first. */
  checkpoints: string[];
  /** Candidate lock folders, the project-scoped layout first. */
  lockFolders: string[];
}

/** The backend's folder for a `file://` URL; undefined for every other backend. */
export function fileBackendFolder(backendUrl: string | undefined): string | undefined {
  if (!backendUrl?.startsWith("file://")) return undefined;
  const rest = backendUrl.slice("file://".length).replace(/\?.*$/, "");
  if (rest === "~" || rest.startsWith("~/")) return join(homedir(), rest.slice(1));
  return fileURLToPath(`file://${rest}`);
}

export function stackFiles(folder: string, projectName: string, stackName: string): StackFiles {
  const bookkeeping = join(folder, ".pulumi");
  return {
    checkpoints: [
      join(bookkeeping, "stacks", projectName, `${stackName}.json`),
      join(bookkeeping, "stacks", `${stackName}.json`),
    ],
    lockFolders: [
      join(bookkeeping, "locks", "organization", projectName, stackName),
      join(bookkeeping, "locks", stackName),
    ],
  };
}

const CHECKPOINT_FILE = /^(.+)\.json(\.gz)?$/;

function stackNamesIn(folder: string): string[] {
  const names = readdirSync(folder).flatMap((name) => CHECKPOINT_FILE.exec(name)?.[1] ?? []);
  return [...new Set(names)].sort();
}

/**
 * The project's stacks in a file backend folder, by their checkpoint files,
 * without reading any of them. Undefined where the folder keeps stacks in the
 * older layout without projects, which only the CLI sorts by project.
 */
export function projectStackNames(folder: string, projectName: string): string[] | undefined {
  const stacks = join(folder, ".pulumi", "stacks");
  const project = join(stacks, projectName);
  if (existsSync(project)) return stackNamesIn(project);
  return existsSync(stacks) && stackNamesIn(stacks).length > 0 ? undefined : [];
}

/** A stack's checkpoint file in a file backend folder, named as the CLI names the stack. */
export interface StackCheckpointFile {
  /** `<project>/<stack>`, or the stack alone in the older layout without projects. */
  name: string;
  /** The checkpoint file, without a `.gz` the backend may have added. */
  file: string;
}

/** Every stack's checkpoint file in a file backend folder, of every project, without reading any of them. */
export function everyStackFile(folder: string): StackCheckpointFile[] {
  const stacks = join(folder, ".pulumi", "stacks");
  if (!existsSync(stacks)) return [];
  const inFolder = (sub: string, prefix: string) =>
    stackNamesIn(sub).map((stack) => ({ name: `${prefix}${stack}`, file: join(sub, `${stack}.json`) }));
  const projects = readdirSync(stacks, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  return [
    ...inFolder(stacks, ""),
    ...projects.flatMap((project) => inFolder(join(stacks, project.name), `${project.name}/`)),
  ];
}
