import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "../../scripts/build/process.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { useEngine } from "./engine";

/**
 * Runs the benchmark as `npm run bench -- <args>` does (bench/dist/main.js,
 * the engine's environment) into a folder of its own, and answers the
 * report it wrote there, `<name>.json` and `<name>.md`; the folder goes.
 */
export async function runBench<R>(args: readonly string[], name: string): Promise<{ report: R; markdown: string }> {
  const out = mkdtempSync(join(tmpdir(), "dmarc-bench-"));
  try {
    const env = await useEngine();
    await runProcess(process.execPath, [join(projectRoot, "bench", "dist", "main.js"), ...args, "--out", out], {
      what: `the benchmark (${args.join(" ")})`,
      env,
      timeoutMs: 240_000,
    });
    return {
      report: JSON.parse(readFileSync(join(out, `${name}.json`), "utf8")) as R,
      markdown: readFileSync(join(out, `${name}.md`), "utf8"),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
