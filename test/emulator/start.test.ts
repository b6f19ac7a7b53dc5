import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmulator } from "dmarc-partner-emulator";
import { describe, expect, it } from "vitest";

const directory = mkdtempSync(join(tmpdir(), "dmarc-emulator-start-"));

describe("startEmulator", () => {
  it("fails to start on a port in use", async () => {
    const first = await startEmulator();
    try {
      const port = Number(new URL(first.url).port);
      await expect(startEmulator({ port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });

  it("fails to start on an unreadable state file or an unwritable request log", async () => {
    const broken = join(directory, "broken.json");
    writeFileSync(broken, "{not json");
    await expect(startEmulator({ stateFile: broken })).rejects.toThrow(/cannot read the state file/);
    await expect(startEmulator({ stateFile: join(directory, "missing", "state.json") })).rejects.toThrow(
      /does not exist/,
    );
    await expect(startEmulator({ requestLogFile: join(directory, "missing", "log.jsonl") })).rejects.toThrow(/ENOENT/);
  });

  it("refuses partners that share credentials or price ids", async () => {
    const partner = { id: "p", name: "P", clientId: "c", clientSecret: "s", tokens: ["t"] };
    await expect(startEmulator({ partners: [partner, { ...partner, id: "q", tokens: [] }] })).rejects.toThrow(
      /clientId "c" is used more than once/,
    );
  });

  it("serves its simulated zone on loopback and answers on the host and port asked for", async () => {
    const emulator = await startEmulator({ host: "127.0.0.1" });
    try {
      expect(emulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(emulator.dnsServer).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(emulator.partners.map((partner) => partner.id)).toEqual(["demo-alpha", "demo-beta"]);
      const answer = await fetch(`${emulator.url}/v1/partners/plans`, {
        headers: { authorization: "Bearer demo-beta-token" },
      });
      const plans = (await answer.json()) as Array<{ prices: Array<{ id: string }> }>;
      expect(plans.flatMap((plan) => plan.prices.map((price) => price.id))).toEqual([
        "price_demo-beta_starter_monthly",
        "price_demo-beta_starter_yearly",
        "price_demo-beta_business_monthly",
        "price_demo-beta_business_yearly",
      ]);
    } finally {
      await emulator.close();
    }
  });
});
