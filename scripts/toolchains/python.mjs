// The project's Python: a virtual environment (the artefact `python-env`)
// with Pulumi's Python SDK at the engine's version (pinnedPulumiVersion) and
// the packages of python-requirements.txt, from PyPI with pip, for the Python
// programs the tests run through the engine and the plugin; and one with
// PyPI's `build` (the artefact `python-build`) for the SDK's packages. Each
// is made by the python3 on PATH, and made again when that Python, the
// Pulumi version or the requirements change. `node
// scripts/toolchains/python.mjs` makes the first and prints its interpreter.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { ask, runProcess } from "../build/process.mjs";
import { artefactRoot, isMain, pinnedPulumiVersion } from "../project.mjs";

const requirements = join(import.meta.dirname, "python-requirements.txt");
const pipInstall = ["-m", "pip", "install", "--disable-pip-version-check", "--quiet"];
// pip's downloads are kept in the project too, as npm's and Go's are not.
const pipEnv = { PIP_CACHE_DIR: join(artefactRoot, "pip-downloads") };

/** PyPI's `build` (the PEP 517 front end), for the SDK's wheel and sdist. */
const PYTHON_BUILD_VERSION = "1.6.1";

// Installs take a minute or two on a slow registry; past this, something hangs.
const PIP_TIMEOUT_MS = 600_000;

function basePythonVersion() {
  const probe = ask("python3", ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"]);
  const version = probe.ok ? probe.stdout.trim() : "";
  const [major, minor] = version.split(".").map(Number);
  // mitmproxy, the tests' TLS-inspecting proxy, needs 3.10.
  if (!(major === 3 && minor >= 10)) {
    throw new Error(`Python 3.10 or newer is needed as python3 on PATH for the tests (found "${version}")`);
  }
  return version;
}

/**
 * A virtual environment of `kind` with `packages` (pip's arguments); answers
 * its interpreter. (It is used as `<venv>/bin/python -m ...` only, which
 * works from where the artefact's work folder was renamed to; the commands in
 * bin/ keep the work folder's path in their first line.)
 */
async function ensureVirtualEnvironment(kind, inputs, packages) {
  const python = basePythonVersion();
  const { folder } = await ensureArtefact(kind, { python, ...inputs }, async (work) => {
    process.stderr.write(`[python] making the ${kind} environment from PyPI\n`);
    const venv = join(work, "venv");
    const making = "making the virtual environment (on Debian and Ubuntu, python3 -m venv needs python3-venv)";
    await runProcess("python3", ["-m", "venv", venv], { what: making });
    const options = { what: "pip install", env: pipEnv, timeoutMs: PIP_TIMEOUT_MS };
    await runProcess(join(venv, "bin", "python"), [...pipInstall, ...packages], options);
  });
  return join(folder, "venv", "bin", "python");
}

/**
 * The tests' environment, made when missing; answers its interpreter.
 * @returns {Promise<string>}
 */
export function ensurePythonEnvironment() {
  const pulumi = pinnedPulumiVersion();
  const inputs = { pulumi, requirements: readFileSync(requirements, "utf8") };
  return ensureVirtualEnvironment("python-env", inputs, ["-r", requirements, `pulumi==${pulumi}`]);
}

/**
 * The environment with `build`, made when missing; answers its interpreter.
 * @returns {Promise<string>}
 */
export function ensurePythonBuild() {
  return ensureVirtualEnvironment("python-build", { build: PYTHON_BUILD_VERSION }, [`build==${PYTHON_BUILD_VERSION}`]);
}

/**
 * Installs the Python package whose sources (setup.py) are in `folder` into
 * the tests' environment, replacing any installed copy of the same version:
 * a generated SDK changes with the schema, not its version. Its dependencies
 * must already be there (python-requirements.txt): nothing else is fetched.
 * Builds in `folder`. The one change made to an artefact after it is made,
 * to a package the artefact's inputs do not name.
 * @param {string} folder
 * @returns {Promise<string>}
 */
export async function installPythonPackage(folder) {
  const python = await ensurePythonEnvironment();
  const offline = ["--no-index", "--no-build-isolation", "--no-deps", "--force-reinstall"];
  await runProcess(python, [...pipInstall, ...offline, folder], { what: `pip install ${folder}`, env: pipEnv });
  return python;
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${await ensurePythonEnvironment()}\n`);
}
