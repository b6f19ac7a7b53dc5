import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { ensureArtefact, fileDigest } from "../../scripts/build/artefact.mjs";

// A project's `npm install`, paid once for the same inputs: the packed
// tarball (by its bytes) and the manifest that names it. It is an artefact
// (scripts/build/artefact.mjs, kind `partner-install`): the first project
// installs into the artefact's work folder, and it and every later project
// with the same tarball and manifest (another Node.js line's run, the next
// run of the suite) get a copy of it, which is what npm would install again.
// The artefact rule's lock, grace for a copy in use and pruning are the
// build's.

/** What npm writes into a project, and a copy brings back. */
const INSTALLED = ["node_modules", "package-lock.json"];
/** node_modules/.bin's links stay relative, so a copy's commands run the copy's packages. */
const COPY = { recursive: true, verbatimSymlinks: true };

/**
 * Fills `projectDir` (its package.json written, the tarball it names in it)
 * with what `install(folder)` writes into a folder holding that package.json
 * and tarball, installed once for the same tarball and manifest. Answers
 * whether an earlier install was copied.
 */
export async function installOnce(
  projectDir: string,
  tarball: string,
  install: (folder: string) => void,
): Promise<boolean> {
  const manifest = readFileSync(join(projectDir, "package.json"), "utf8");
  const inTheProject = relative(projectDir, tarball);
  const { folder, made } = await ensureArtefact(
    "partner-install",
    { tarball: fileDigest(tarball), manifest },
    (work: string) => {
      // Installed where the manifest finds the tarball as it does in the project; only what npm writes is kept.
      mkdirSync(join(work, dirname(inTheProject)), { recursive: true });
      cpSync(tarball, join(work, inTheProject));
      cpSync(join(projectDir, "package.json"), join(work, "package.json"));
      install(work);
      for (const given of ["package.json", inTheProject.split(sep)[0] ?? inTheProject]) {
        rmSync(join(work, given), { recursive: true, force: true });
      }
    },
  );
  for (const name of INSTALLED) {
    rmSync(join(projectDir, name), { recursive: true, force: true });
    cpSync(join(folder, name), join(projectDir, name), COPY);
  }
  return !made;
}
