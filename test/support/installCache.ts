import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../../scripts/project.mjs";

// A project's `npm install`, paid once for the same inputs: the packed
// tarball (by its bytes) and the manifest that names it. The first project
// installs with npm and leaves a copy of its node_modules here; the next one
// with the same tarball and manifest (another Node.js line's run, the next
// run of the suite) gets that copy, which is what npm would install again.
// A new tarball's first install drops the copies of the older ones.

const CACHE = join(projectRoot, ".cache", "partner-installs");
/** What npm writes into a project, and a copy brings back. */
const INSTALLED = ["node_modules", "package-lock.json"];
/** node_modules/.bin's links stay relative, so a copy's commands run the copy's packages. */
const COPY = { recursive: true, verbatimSymlinks: true };

/**
 * Fills `projectDir` (its package.json written, the tarball it names in it)
 * with what `install` writes there, from the copy of an earlier install of
 * the same tarball and manifest when there is one. Returns whether it was
 * copied.
 */
export function installOnce(projectDir: string, tarball: string, install: () => void): boolean {
  const tarballHash = createHash("sha256").update(readFileSync(tarball)).digest("hex").slice(0, 16);
  const manifestHash = createHash("sha256")
    .update(readFileSync(join(projectDir, "package.json")))
    .digest("hex")
    .slice(0, 16);
  const copy = join(CACHE, tarballHash, manifestHash);
  if (existsSync(copy)) {
    for (const name of INSTALLED) cpSync(join(copy, name), join(projectDir, name), COPY);
    return true;
  }
  install();
  for (const older of existsSync(CACHE) ? readdirSync(CACHE) : []) {
    if (older !== tarballHash) rmSync(join(CACHE, older), { recursive: true, force: true });
  }
  // Copied aside, then renamed into place: a run that finds the copy finds it whole.
  const aside = `${copy}.${process.pid}`;
  mkdirSync(aside, { recursive: true });
  for (const name of INSTALLED) cpSync(join(projectDir, name), join(aside, name), COPY);
  try {
    renameSync(aside, copy);
  } catch {
    // Another run put its copy of the same install there first.
    rmSync(aside, { recursive: true, force: true });
  }
  return false;
}
