// Another commit of the project, built, for `npm run bench -- --against
// <ref>` to measure beside this checkout: the artefact `checkout`, a git
// worktree of the commit with its npm packages installed and its TypeScript
// built, as its own `npm run bench` would have them. Made by this checkout's
// build, never by the commit's own scripts, which may predate parts of it
// (the one cache rule, the engine's room); the engine is this checkout's
// rule's, at the version the commit pins.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureArtefact } from "./build/artefact.mjs";
import { ask, runProcess } from "./build/process.mjs";
import { ensureEngine } from "./engine/index.mjs";
import { projectRoot } from "./project.mjs";

/** A commit is built once for an hour of runs at least; a build takes minutes (npm ci, tsc -b). */
const BUILD_TIMEOUT_MS = 30 * 60_000;

function git(args) {
  const answer = ask("git", args, { cwd: projectRoot });
  if (!answer.ok) throw new Error(`git ${args.join(" ")}: ${answer.said}`);
  return answer.stdout.trim();
}

/**
 * The full commit `ref` names; fails naming the ref when git knows none.
 * @param {string} ref
 * @returns {string}
 */
export function commitOf(ref) {
  const found = ask("git", ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: projectRoot });
  if (!found.ok) throw new Error(`--against ${ref}: no such commit, branch or tag in ${projectRoot}`);
  return found.stdout.trim();
}

const manifestAt = (tree, folder) => JSON.parse(readFileSync(join(tree, folder, "package.json"), "utf8"));

/**
 * The commit `ref` names, built in a worktree of its own; answers the
 * worktree, the commit, its package's version and the environment its
 * engine runs with.
 * @param {string} ref
 * @returns {Promise<{ commit: string, tree: string, packageVersion: string, pulumiVersion: string, env: Record<string, string> }>}
 */
export async function builtCheckout(ref) {
  const commit = commitOf(ref);
  const { folder } = await ensureArtefact("checkout", { commit, node: process.version }, async (work) => {
    const tree = join(work, "tree");
    // Worktrees of checkouts that pruning removed are forgotten, so that git's list names only real ones.
    git(["worktree", "prune"]);
    git(["worktree", "add", "--detach", tree, commit]);
    const step = (what, command, args) =>
      runProcess(command, args, {
        cwd: tree,
        what: `${what} (${commit.slice(0, 7)})`,
        tag: "checkout",
        timeoutMs: BUILD_TIMEOUT_MS,
      });
    await step("npm ci", "npm", ["ci", "--no-audit", "--no-fund"]);
    await step("tsc -b", join(tree, "node_modules", ".bin", "tsc"), ["-b"]);
    return { commit };
  });
  const tree = join(folder, "tree");
  // Made in a work folder and renamed into place: git's record of where the worktree is follows it.
  git(["worktree", "repair", tree]);
  const pulumiVersion = manifestAt(tree, ".").devDependencies?.["@pulumi/pulumi"];
  const { env } = await ensureEngine(pulumiVersion);
  return { commit, tree, packageVersion: manifestAt(tree, "provider").version, pulumiVersion, env };
}
