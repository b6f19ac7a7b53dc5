import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FLEET_EXIT, main } from "pulumi-dmarc-partner/fleet";
import { afterEach, describe, expect, it, vi } from "vitest";

// `dmarc-fleet enforce`'s command line alone: what it refuses before it
// reads the project, the inventory or the service.

function run(argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  return main(argv).then((code) => ({ code, stderr }));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("dmarc-fleet enforce's arguments", () => {
  it.each([["2026-13-01"], ["2026-02-30"], ["25/11/2026"]])("refuses --today %s, which is no day", async (day) => {
    const { code, stderr } = await run(["enforce", "--today", day]);
    expect(code).toBe(FLEET_EXIT.usage.code);
    expect(stderr).toContain(`--today must be a day as YYYY-MM-DD, such as 2026-11-30, got "${day}"`);
  });

  it.each([
    ["--inventory", "tenants.yaml"],
    ["--config-stack", "prod"],
  ])("refuses --stack with %s: the stack's file and settings are the program's", async (option, value) => {
    const { code, stderr } = await run(["enforce", "--stack", "prod", option, value]);
    expect(code).toBe(FLEET_EXIT.usage.code);
    expect(stderr).toContain(`--stack enforces a program's stack, its configuration included: leave out ${option}`);
  });

  it("refuses --stack without its stack's configuration file", async () => {
    const { code, stderr } = await run(["enforce", "--stack", "org/acme/nowhere", "--cwd", tmpdir()]);
    expect(code).toBe(FLEET_EXIT.usage.code);
    expect(stderr).toContain(
      `--stack org/acme/nowhere: no stack configuration file ${join(tmpdir(), "Pulumi.nowhere.yaml")}`,
    );
  });

  it("looks for the stack's configuration file in Pulumi.yaml's stackConfigDir", async () => {
    const project = mkdtempSync(join(tmpdir(), "dmarc-enforce-config-dir-"));
    writeFileSync(join(project, "Pulumi.yaml"), "name: acme\nruntime: nodejs\nstackConfigDir: settings\n");
    const { code, stderr } = await run(["enforce", "--stack", "prod", "--cwd", project]);
    expect(code).toBe(FLEET_EXIT.usage.code);
    expect(stderr).toContain(
      `--stack prod: no stack configuration file ${join(project, "settings", "Pulumi.prod.yaml")}`,
    );
  });

  it("refuses its own options on another command", async () => {
    const { code, stderr } = await run(["preview", "--write"]);
    expect(code).toBe(FLEET_EXIT.usage.code);
    expect(stderr).toContain("--write applies to enforce, not to preview");
  });

  it("lists enforce and its exit code in the usage text", async () => {
    let stdout = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      stdout += String(chunk);
      return true;
    });
    expect(await main(["--help"])).toBe(FLEET_EXIT.ok.code);
    expect(stdout).toContain("|import|enforce|report>");
    expect(stdout).toContain(`   ${FLEET_EXIT.moves.code}  policy moves proposed (enforce --detailed-exitcode)`);
  });
});
