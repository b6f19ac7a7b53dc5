// The GitHub Actions workflows checked by actionlint (github.com/rhysd/actionlint):
// syntax, expressions and their types, job dependencies, runner labels,
// action inputs. Built once from the Go module proxy into
// .engine/tools/actionlint-v<version>/, beside the engine's other Go tools.
//
// `node scripts/actionlint.mjs [<workflow>...]` lints the given files, or
// every workflow of .github/workflows/; it exits non-zero on a finding.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { projectRoot } from "./engine.mjs";

const ACTIONLINT_VERSION = "1.7.12";
const toolFolder = join(projectRoot, ".engine", "tools", `actionlint-v${ACTIONLINT_VERSION}`);

/** The actionlint binary, built with `go install` when missing; answers its path. */
export function ensureActionlint() {
  const binary = join(toolFolder, "actionlint");
  if (existsSync(binary)) return binary;
  // Built into a folder of this process's, then renamed: two runs building at once never see half a binary.
  const partial = `${toolFolder}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  process.stderr.write(`[actionlint] building actionlint ${ACTIONLINT_VERSION} from the Go module proxy\n`);
  execFileSync("go", ["install", `github.com/rhysd/actionlint/cmd/actionlint@v${ACTIONLINT_VERSION}`], {
    env: { ...process.env, GOBIN: partial, GOTOOLCHAIN: "local", GOFLAGS: "-trimpath" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  try {
    renameSync(partial, toolFolder);
  } catch {
    // Another run put its build there first.
    rmSync(partial, { recursive: true, force: true });
  }
  return binary;
}

/** actionlint's findings on `files` (default: every workflow of the repository); `ok` when there are none. */
export function lintWorkflows(files = []) {
  const result = spawnSync(ensureActionlint(), ["-no-color", ...files], { cwd: projectRoot, encoding: "utf8" });
  return { ok: result.status === 0, findings: `${result.stdout}${result.stderr}`.trim() };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ok, findings } = lintWorkflows(process.argv.slice(2));
  process.stdout.write(ok ? "actionlint: no findings\n" : `${findings}\n`);
  process.exit(ok ? 0 : 1);
}
