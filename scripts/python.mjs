// The project's Python: a virtual environment in .cache/python/venv with
// Pulumi's Python SDK at the engine's version (pinnedPulumiVersion) and the
// packages of scripts/python-requirements.txt, from PyPI with pip, for the
// Python programs the tests run through the engine and the plugin. Made once
// by the python3 on PATH and stamped; made again when the Pulumi version, the
// requirements or that Python change. Dependency-free, like engine.mjs.
// `node scripts/python.mjs` makes it and prints its interpreter.

import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pinnedPulumiVersion, projectRoot } from "./engine.mjs";

/** The virtual environment's folder, for Pulumi.yaml's `runtime.options.virtualenv`. */
export const virtualEnvironment = join(projectRoot, ".cache", "python", "venv");
// pip's downloads are kept in the project too, as npm's and Go's are not.
const pipCache = join(projectRoot, ".cache", "python", "pip");
const requirements = join(projectRoot, "scripts", "python-requirements.txt");
const stampFile = (venv) => join(venv, "dmarc-stamp.json");
const pipInstall = ["-m", "pip", "install", "--disable-pip-version-check", "--quiet"];

// Installs take a minute or two on a slow registry; past this, something hangs.
const PIP_TIMEOUT_MS = 600_000;

// Asynchronous, so that a test process that provisions keeps serving meanwhile.
function run(command, args, what) {
  return new Promise((resolvePromise, reject) => {
    const env = { ...process.env, PIP_CACHE_DIR: pipCache };
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"], timeout: PIP_TIMEOUT_MS });
    let output = "";
    const keep = (chunk) => {
      output = (output + chunk.toString()).slice(-8000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (error) => reject(new Error(`${what} failed (${command}: ${error.message})`)));
    child.on("close", (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${what} failed (${command} ${args.join(" ")}: ${signal ?? `exit ${code}`}):\n${output}`));
    });
  });
}

function basePythonVersion() {
  const probe = spawnSync("python3", ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], {
    encoding: "utf8",
  });
  const version = probe.status === 0 ? probe.stdout.trim() : "";
  const [major, minor] = version.split(".").map(Number);
  // mitmproxy, the tests' TLS-inspecting proxy, needs 3.10.
  if (!(major === 3 && minor >= 10)) {
    throw new Error(`Python 3.10 or newer is needed as python3 on PATH for the tests (found "${version}")`);
  }
  return version;
}

// What the environment is made of: a change to any part makes it anew.
function wantedStamp() {
  const digest = createHash("sha256").update(readFileSync(requirements)).digest("hex").slice(0, 16);
  return `${JSON.stringify({ python: basePythonVersion(), pulumi: pinnedPulumiVersion(), requirements: digest })}\n`;
}

function readStamp(venv) {
  try {
    return readFileSync(stampFile(venv), "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Makes the virtual environment when it is missing or stale and answers its
 * interpreter. Made in a folder of its own per process, then renamed into
 * place: a run that finds it finds it whole. (It is used as
 * `<venv>/bin/python -m ...` only, which works from the new place; the
 * commands in bin/ keep the old path in their first line.)
 */
export async function ensurePythonEnvironment() {
  const wanted = wantedStamp();
  const python = join(virtualEnvironment, "bin", "python");
  if (readStamp(virtualEnvironment) === wanted && existsSync(python)) return python;
  const partial = `${virtualEnvironment}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  process.stderr.write(`[python] making ${virtualEnvironment} with pulumi ${pinnedPulumiVersion()} from PyPI\n`);
  try {
    const venv = "making the virtual environment (on Debian and Ubuntu, python3 -m venv needs python3-venv)";
    await run("python3", ["-m", "venv", partial], venv);
    const packages = ["-r", requirements, `pulumi==${pinnedPulumiVersion()}`];
    await run(join(partial, "bin", "python"), [...pipInstall, ...packages], "pip install");
    writeFileSync(stampFile(partial), wanted);
    rmSync(virtualEnvironment, { recursive: true, force: true });
    renameSync(partial, virtualEnvironment);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    // Another process may have put an equal environment in place meanwhile.
    if (readStamp(virtualEnvironment) !== wanted) throw error;
  }
  return python;
}

/**
 * Installs the Python package whose sources (setup.py) are in `folder` into
 * the environment, replacing any installed copy of the same version: a
 * generated SDK changes with the schema, not its version. Its dependencies
 * must already be there (python-requirements.txt): nothing else is fetched.
 * Builds in `folder`; one install at a time in the environment.
 */
export async function installPythonPackage(folder) {
  const python = await ensurePythonEnvironment();
  const offline = ["--no-index", "--no-build-isolation", "--no-deps", "--force-reinstall"];
  await run(python, [...pipInstall, ...offline, folder], `pip install ${folder}`);
  return python;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${await ensurePythonEnvironment()}\n`);
}
