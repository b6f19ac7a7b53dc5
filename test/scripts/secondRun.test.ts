import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";

// What the build makes is made once: a second run of every build, in a
// process of its own as the next `npm test` or `npm run` is, finds each
// artefact made (scripts/build/artefact.mjs, which says on stderr what it
// makes), and builds nothing.

const BUILD_TIMEOUT = 1_800_000;

/** Every build the scripts have, as a command and a test run them. */
const EVERY_BUILD = `
  const scripts = ${JSON.stringify(join(projectRoot, "scripts"))};
  const load = (path) => import(scripts + "/" + path);
  const { ensureEngine } = await load("engine/index.mjs");
  const { ensureSdkGenerator, ensureProgramGenerator } = await load("sdk/generators.mjs");
  const { generateSdks } = await load("sdk/index.mjs");
  const { buildPlugin } = await load("plugin/index.mjs");
  const { ensurePythonEnvironment, ensurePythonBuild } = await load("toolchains/python.mjs");
  const { ensureNodeLine, otherNodeLines } = await load("toolchains/node-lines.mjs");
  const { ensureLinters } = await load("toolchains/actionlint.mjs");
  await ensureEngine();
  for (const language of ["nodejs", "python", "go", "dotnet"]) await ensureSdkGenerator(language);
  for (const language of ["nodejs", "python", "go", "dotnet", "yaml"]) await ensureProgramGenerator(language);
  await generateSdks(process.argv[1]);
  await buildPlugin();
  await ensurePythonEnvironment();
  await ensurePythonBuild();
  for (const line of otherNodeLines()) await ensureNodeLine(line);
  await ensureLinters();
`;

function runEveryBuild(out: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", EVERY_BUILD, out], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let said = "";
    child.stderr.on("data", (chunk) => {
      said += chunk;
    });
    child.on("close", (code) => (code === 0 ? resolve(said) : reject(new Error(`exit ${code}:\n${said}`))));
  });
}

describe("a second run of every build", () => {
  let work: string;
  let said: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "dmarc-second-run-"));
    await runEveryBuild(join(work, "first"));
    said = await runEveryBuild(join(work, "second"));
  }, BUILD_TIMEOUT);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("makes no artefact (each making says so on stderr), and still does its job", () => {
    expect(said).toBe("");
    expect(existsSync(join(work, "second", "nodejs", "package.json"))).toBe(true);
  });
});
