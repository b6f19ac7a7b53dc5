import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../scripts/project.mjs";

// The repository against knip.jsonc: no export, type, file or dependency that
// nothing uses, no import of a package its package.json does not list, and no
// stale entry in the config's allow-lists. `npx knip` shows the same.

interface Finding {
  name: string;
  line?: number;
}

/** knip's JSON report: per file, one list of findings per kind (a duplicate is a list of names). */
interface KnipReport {
  issues: ({ file: string } & Record<string, (Finding | Finding[])[]>)[];
}

interface KnipRun {
  /** One line per finding: file, line, symbol and kind. */
  findings: string[];
  /** knip's exit code: 1 for a finding, and for a configuration or tag hint, which only the text names. */
  code: number;
  /** The report as knip prints it, hints included. */
  text: string;
}

function runKnip(): Promise<KnipRun> {
  const folder = mkdtempSync(join(tmpdir(), "knip-"));
  const json = join(folder, "report.json");
  const args = ["--no-progress", "--reporter", "symbols", "--reporter", "json", "--output-file", `json=${json}`];
  return new Promise((resolve, reject) => {
    execFile(
      join(projectRoot, "node_modules", ".bin", "knip"),
      args,
      { cwd: projectRoot, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        try {
          const report: KnipReport = JSON.parse(readFileSync(json, "utf8"));
          const findings = report.issues.flatMap(({ file, ...kinds }) =>
            Object.entries(kinds).flatMap(([kind, found]) =>
              found.map((item) =>
                Array.isArray(item)
                  ? `${file}: ${item.map(({ name }) => name).join(" = ")} (${kind})`
                  : `${file}${item.line ? `:${item.line}` : ""}: ${item.name} (${kind})`,
              ),
            ),
          );
          resolve({ findings, code: error ? Number(error.code) : 0, text: `${stdout}${stderr}`.trim() });
        } catch (failure) {
          reject(new Error(`knip wrote no report (${(failure as Error).message}):\n${stdout}${stderr}`));
        } finally {
          rmSync(folder, { recursive: true, force: true });
        }
      },
    );
  });
}

describe("unused code (knip)", () => {
  const run = runKnip();

  it("finds nothing unused or unlisted outside knip.jsonc's allow-lists", async () => {
    expect((await run).findings).toEqual([]);
  }, 240_000);

  it("passes with no configuration or tag hint: every allow-list entry is still needed", async () => {
    const { code, text } = await run;
    expect({ code, text }).toEqual({ code: 0, text: "" });
  }, 240_000);
});
