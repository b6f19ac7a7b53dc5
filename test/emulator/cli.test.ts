import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PlanList } from "pulumi-dmarc-partner/api";
import { afterEach, describe, expect, it } from "vitest";
import { ApiCaller, waitFor } from "./helpers";

const MAIN = join(__dirname, "..", "..", "emulator", "dist", "main.js");
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function run(args: string[]) {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output, exited };
}

describe("dmarc-emulator CLI", () => {
  it("starts with a partners file, says how fast and how to connect, logs requests and stops on SIGTERM", async () => {
    const directory = mkdtempSync(join(tmpdir(), "dmarc-emulator-cli-"));
    const partnersFile = join(directory, "partners.json");
    const requestLog = join(directory, "requests.jsonl");
    writeFileSync(
      partnersFile,
      JSON.stringify([
        { id: "acme", name: "Acme Reseller", clientId: "acme-id", clientSecret: "acme-secret", tokens: ["acme-token"] },
      ]),
    );
    const { child, output, exited } = run([
      "--port",
      "0",
      "--partners",
      partnersFile,
      "--request-log",
      requestLog,
      "--log-level",
      "silent",
    ]);
    await waitFor("the banner", () => (output.stdout.includes("Press Ctrl+C") ? true : undefined), {
      timeoutMs: 10_000,
    });
    // The banner reports the start-up time it measured; how fast is the benchmark's business, not a test's.
    expect(output.stdout).toMatch(/ready in \d+ ms/);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output.stdout)?.[1] ?? "";
    expect(url).not.toBe("");
    for (const expected of [
      "acme-id",
      "acme-secret",
      "acme-token",
      `export DMARC_BASE_URL=${url}`,
      "DMARC_CLIENT_ID=acme-id",
      "DMARC_CLIENT_SECRET=acme-secret",
      "DMARC_ACCESS_TOKEN=acme-token",
      `pulumi config set dmarc:baseUrl ${url}`,
    ]) {
      expect(output.stdout).toContain(expected);
    }
    const plans = await new ApiCaller(url, "acme-token").call("GET", "/v1/partners/plans", { schema: PlanList });
    expect(plans.body[0]?.prices[0]?.id).toBe("price_acme_starter_monthly");

    child.kill("SIGTERM");
    const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("timeout"), 5_000))]);
    expect(code).toBe(0);
    const logged = readFileSync(requestLog, "utf8").trim().split("\n");
    expect(logged.map((line) => JSON.parse(line).path)).toEqual(["/v1/partners/plans"]);
  });

  it("refuses bad arguments with exit code 2 and the usage", async () => {
    const { output, exited } = run(["--port", "many"]);
    expect(await exited).toBe(2);
    expect(output.stderr).toContain("--port must be a whole number");
    expect(output.stderr).toContain("Usage: dmarc-emulator");
  });

  it("starts with a rate limit that gives no hints, as the published example of a 429", async () => {
    const { output } = run([
      "--port",
      "0",
      "--log-level",
      "silent",
      "--rate-limit",
      "2/60",
      "--rate-limit-hints",
      "none",
      "--rate-limit-window",
      "fixed",
    ]);
    const url = await waitFor("the banner", () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output.stdout)?.[1], {
      timeoutMs: 10_000,
    });
    const listed = (await (await fetch(`${url}/_emulator/faults`)).json()) as Array<Record<string, unknown>>;
    expect(listed).toMatchObject([
      { route: "*", rateLimit: { requests: 2, perSeconds: 60, hints: "none", window: "fixed" } },
    ]);
    const caller = new ApiCaller(url, "demo-alpha-token");
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<ApiCaller["call"]>> | undefined;
    // Three calls meet the limit within one minute of the clock, whichever minute they start in.
    for (let attempt = 0; attempt < 6 && refused === undefined; attempt += 1) {
      const answer = await caller.call("GET", "/v1/partners/plans");
      statuses.push(answer.status);
      if (answer.status === 429) refused = answer;
    }
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);
    expect(refused?.headers.get("retry-after")).toBeNull();
    const details = (refused?.body as { details?: Record<string, unknown> } | undefined)?.details;
    expect(details).toBeDefined();
    expect(details).not.toHaveProperty("retryAfterSeconds");
  });

  it("refuses a rate limit it cannot read", async () => {
    const { output, exited } = run(["--rate-limit", "60"]);
    expect(await exited).toBe(2);
    expect(output.stderr).toContain("--rate-limit must be <requests>/<seconds> such as 60/60");
  });

  it("refuses an invalid partners file", async () => {
    const directory = mkdtempSync(join(tmpdir(), "dmarc-emulator-cli-"));
    const partnersFile = join(directory, "partners.json");
    writeFileSync(partnersFile, JSON.stringify([{ id: "x" }]));
    const { output, exited } = run(["--partners", partnersFile]);
    expect(await exited).toBe(2);
    expect(output.stderr).toContain("is invalid");
  });
});
