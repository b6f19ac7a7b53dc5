// The one entry point behind `npm test`, `npm run test:guides`, `npm run test:reliability`,
// `npm run demo`, `npm run emulator`, `npm run bench`, `npm run docs`, `npm run plugin` and `npm run sdk`. npm
// runs these scripts even without node_modules, so this file is
// dependency-free: it installs, builds and provisions the engine first, then
// does the job. Every step says what it is doing.

import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { runInTerminal } from "./build/process.mjs";
import { ensureEngine } from "./engine/index.mjs";
import { projectRoot } from "./project.mjs";
import { ensureNodeLine, otherNodeLines } from "./toolchains/node-lines.mjs";

const bin = (name) => join(projectRoot, "node_modules", ".bin", name);
// The tests `npm test` runs against the service's rate limit with time as a parameter, faster than the published
// minute (test/support/timeScale.ts); the reliability run runs them at the published 60 requests a minute.
const REAL_TIME_TESTS = ["test/fleet/matrix.test.ts", "test/fleet/rateLimit.test.ts"];
const testResults = join(projectRoot, ".cache", "test-results.json");

function say(message) {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

const run = (command, args, env) => runInTerminal(command, args, { cwd: projectRoot, env });

async function must(label, command, args, env) {
  say(label);
  const code = await run(command, args, env);
  if (code !== 0) {
    say(`${label} failed (exit ${code})`);
    process.exit(code);
  }
}

function installIsStale() {
  const installed = join(projectRoot, "node_modules", ".package-lock.json");
  if (!existsSync(installed)) return true;
  return statSync(installed).mtimeMs < statSync(join(projectRoot, "package-lock.json")).mtimeMs;
}

async function prepare({ engine }) {
  if (installIsStale()) await must("installing npm packages (npm ci)", "npm", ["ci", "--no-audit", "--no-fund"]);
  await must("building the provider and the emulator (tsc -b)", bin("tsc"), ["-b"]);
  if (!engine) return {};
  say("provisioning the Pulumi engine");
  const { source, env } = await ensureEngine();
  say(`engine: ${source}`);
  return env;
}

const [task = "test", ...args] = process.argv.slice(2);

switch (task) {
  case "test": {
    const env = await prepare({ engine: true });
    // test/package/node-lines.test.ts runs the engine and package tests again on these.
    for (const line of otherNodeLines())
      say(`Node.js ${(await ensureNodeLine(line)).version} for the tests on other Node.js lines`);
    await must("lint and format check (biome)", bin("biome"), ["ci", "."]);
    await must("type-checking tests and examples", bin("tsc"), ["-p", "test/tsconfig.json"]);
    mkdirSync(join(projectRoot, ".cache"), { recursive: true });
    rmSync(testResults, { force: true });
    say("running tests (vitest)");
    const code = await run(
      bin("vitest"),
      ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${testResults}`, ...args],
      env,
    );
    process.exit(code);
    break;
  }
  case "guides": {
    // The whole suite against the emulator's "guides" profile; `npm test` runs it against "published".
    const env = await prepare({ engine: true });
    say("running the whole suite against the emulator's guides profile (vitest)");
    process.exit(await run(bin("vitest"), ["run", ...args], { ...env, DMARC_EMULATOR_PROFILE: "guides" }));
    break;
  }
  case "reliability": {
    // The whole fault, crash and secrets matrix of test/reliability, the plugin program's kills, a TypeScript
    // program and a fleet behind a proxy, ten rounds of imported code, the engine smoke test on the other
    // Node.js lines, and the rate-limited tests at the published minute; `npm test` runs a representative part of the matrix, and those tests faster.
    const env = await prepare({ engine: true });
    say(`running the reliability suite, full matrix, and ${REAL_TIME_TESTS.join(", ")} in real time (vitest)`);
    const files = [
      "test/reliability",
      "test/recovery/pluginKilled.test.ts",
      "test/network/fleet.test.ts",
      "test/network/typescript.test.ts",
      "test/plugin/import.test.ts",
      "test/package/node-lines.test.ts",
      ...REAL_TIME_TESTS,
    ];
    process.exit(await run(bin("vitest"), ["run", ...files, ...args], { ...env, DMARC_RELIABILITY: "full" }));
    break;
  }
  case "demo": {
    const env = await prepare({ engine: true });
    process.exit(await run(process.execPath, [join(projectRoot, "scripts", "demo.mjs"), ...args], env));
    break;
  }
  case "bench": {
    const env = await prepare({ engine: true });
    const bench = join(projectRoot, "bench", "dist", "main.js");
    process.exit(await run(process.execPath, [bench, ...args], env));
    break;
  }
  case "emulator": {
    await prepare({ engine: false });
    process.exit(await run(process.execPath, [join(projectRoot, "emulator", "dist", "main.js"), ...args]));
    break;
  }
  case "docs": {
    // The reference pages are made from the built provider's schemas.
    await prepare({ engine: false });
    process.exit(await run(process.execPath, [join(projectRoot, "scripts", "reference", "index.mjs"), ...args]));
    break;
  }
  case "plugin": {
    // The provider plugin's executable for this machine, archived as Pulumi downloads it (scripts/plugin/).
    await prepare({ engine: false });
    process.exit(await run(process.execPath, [join(projectRoot, "scripts", "plugin", "index.mjs"), ...args]));
    break;
  }
  case "sdk": {
    // The plugin's schema, its four SDKs and their packages (scripts/sdk/), each made once.
    await prepare({ engine: false });
    process.exit(await run(process.execPath, [join(projectRoot, "scripts", "sdk", "index.mjs"), ...args]));
    break;
  }
  case "graph": {
    // CONTRIBUTING.md's module graph, drawn from the rules in .dependency-cruiser.cjs.
    await prepare({ engine: false });
    process.exit(await run(process.execPath, [join(projectRoot, "scripts", "dependencies.mjs"), ...args]));
    break;
  }
  default:
    say(`unknown task "${task}": use test, guides, reliability, demo, bench, emulator, docs, plugin, sdk or graph`);
    process.exit(2);
}
