import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { uniqueStackName, useEngine } from "../support/engine";
import { freePort } from "../support/loopback";

// The demo script as `npm run demo` runs it, on free ports and a stack of its
// own: the root program, whose one `up` publishes the DNS record and waits for
// the verification, the receiver and the signed domain.verified event.

/** Lines of the demo's output that warn: npm, the engine and the SDK must print none. */
function warningLines(output: string): string[] {
  return output.split("\n").filter((line) => /\bwarn(ing)?\b/i.test(line));
}

function runDemo(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(projectRoot, "scripts", "demo.mjs"), ...args], {
      cwd: projectRoot,
      env: { ...process.env, ...env },
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe("npm run demo", () => {
  it("deploys the tenant verified in one up, receives the signed domain.verified event, hides secrets, then destroys", async () => {
    const env = await useEngine();
    const stack = uniqueStackName("demo-test");
    // Both runs must find the emulator at the address the stack saved.
    const ports = [
      ["--emulator-port", String(await freePort())],
      ["--dns-port", String(await freePort())],
      ["--receiver-port", "0", "--stack", stack],
    ].flat();

    const up = await runDemo([...ports, "--wait", "60"], env);
    expect(up.code, up.output).toBe(0);
    // npm, the engine and the SDK print nothing that is not about the program itself.
    expect(warningLines(up.output)).toEqual([]);
    expect(up.output).toMatch(/received domain\.created \(webhook-id msg_[0-9a-f]+\), signature verified/);
    // The description's word for a verified domain, or the guides' (npm run test:guides).
    expect(up.output).toMatch(/domain\.verified: acme\.example (verified|success)/);
    expect(up.output).toMatch(/"host": "_dmarc\.acme\.example"/);
    expect(up.output).toMatch(/"value": "v=DMARC1; p=none; rua=mailto:org_[0-9a-f]+@/);
    expect(up.output).toContain("domainVerified: true");
    // One up, creating everything, the DNS record and the verification included.
    expect(up.output.match(/^Updating \(/gm)).toHaveLength(1);
    expect(up.output).toMatch(/\+ {2}pulumi-nodejs:dynamic\/dmarc:Rfc2136Record tenant-dmarc-record created/);
    expect(up.output).toMatch(/\+ {2}pulumi-nodejs:dynamic\/dmarc:DomainVerification tenant-domain-verified created/);
    expect(up.output).toContain("webhookSecret: [secret]");
    expect(up.output).toContain("adminSignInLink: [secret]");
    expect(up.output).not.toMatch(/whsec_/);
    const dnsKey = JSON.parse(readFileSync(join(projectRoot, ".cache", "demo", `${stack}-dns-key.json`), "utf8"));
    expect(up.output).not.toContain(dnsKey.secret);
    expect(up.output).not.toMatch(/\/auth\/magic\/[A-Za-z0-9]/);

    const destroy = await runDemo([...ports, "--destroy"], env);
    expect(destroy.code, destroy.output).toBe(0);
    expect(warningLines(destroy.output)).toEqual([]);
    expect(destroy.output).toContain("9 deleted");
  }, 300_000);
});
