import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dmarcProvider } from "../../provider/src/plugin/provider";
import { dynamicProviderHost } from "../../provider/src/providerHost";
import { asSecret } from "../../provider/src/runtime/values";
import { badInputs } from "../support/badInputs";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { type PluginProject, pluginProject } from "../support/pluginProject";

// Bad input refused before any call to the service, from any language: the
// dynamic resources' table of bad declarations through the plugin's own
// check, and a Pulumi YAML program's mistakes at `pulumi preview`, each
// message naming the resource, the property and what is allowed.

const ENGINE_TIMEOUT = 240_000;

/** A TSIG secret as tsig-keygen prints one: 32 bytes, base64. */
const TSIG_SECRET = Buffer.alloc(32, 7).toString("base64");

const urnOf = (typeName: string) => `urn:pulumi:dev::tenants::dmarc:index:${typeName}::declared`;

describe("the plugin's check", () => {
  const plugin = dmarcProvider("0.0.0");

  beforeAll(() => {
    // Settings that pass the provider's own check; the address answers nothing, and nothing is sent.
    const settings: Record<string, string> = {
      "dmarc:baseUrl": "http://127.0.0.1:9",
      "dmarc:clientId": "plugin-check",
      "dmarc:clientSecret": "plugin-check",
      "dmarc:partnerId": "partner-plugin-check",
    };
    dynamicProviderHost.configureFrom((key) => settings[key]);
  });

  it.each(badInputs)("refuses bad %s input %j at %s", async (typeName, news, field, expected) => {
    const result = await plugin.check?.(urnOf(typeName), {}, news);
    const failure = result?.failures?.find((candidate) => candidate.reason.includes(`input "${field}"`));
    expect(failure, JSON.stringify(result)).toBeDefined();
    expect(failure?.reason).toContain(`${typeName} input "${field}"`);
    expect(failure?.reason).toContain(expected);
    expect(failure?.reason).toContain("got ");
  });

  it("never quotes a secret input it refuses, and keeps an accepted one secret", async () => {
    const record = { server: "127.0.0.1:53", name: "_dmarc.a.example", type: "TXT", value: "v=DMARC1; p=none" };
    const refused = await plugin.check?.(
      urnOf("Rfc2136Record"),
      {},
      {
        ...record,
        keyName: "update",
        keySecret: asSecret(42),
      },
    );
    expect(JSON.stringify(refused?.failures)).toContain("a secret (not shown)");
    expect(JSON.stringify(refused?.failures)).not.toContain("42");
    const accepted = await plugin.check?.(
      urnOf("Rfc2136Record"),
      {},
      {
        ...record,
        keyName: "update",
        keySecret: TSIG_SECRET,
      },
    );
    expect(accepted?.inputs?.keySecret).toEqual(asSecret(TSIG_SECRET));
  });

  it("names an unknown type in its refusal", async () => {
    await expect(plugin.check?.(urnOf("Tenancy"), {}, {})).rejects.toThrow(/no resource type .*dmarc:index:Tenancy/);
  });
});

describe("a Pulumi YAML program's mistakes, refused at preview", () => {
  let emulator: EmulatorHandle;
  let project: PluginProject;

  beforeAll(async () => {
    emulator = await startTestEmulator();
    project = await pluginProject("dmarc-yaml-mistakes", emulator.stackConfig);
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await emulator?.emulator.close();
  }, ENGINE_TIMEOUT);

  const mistakes: [mistake: string, properties: Record<string, unknown>, expected: RegExp[]][] = [
    ["a misspelt property", { nmae: "Acme" }, [/nmae/, /dmarc:index:Organization|Organization/]],
    ["a missing required property", {}, [/name/, /Organization/]],
    ["a value of the wrong type", { name: ["Acme"] }, [/name/, /string/]],
    ["a value outside an enumeration", { name: "Acme", onDelete: "archive" }, [/archive/, /delete/]],
    [
      "a value the service would refuse",
      { name: " Acme" },
      [/Organization input "name"/, /white space/, /got " Acme"/],
    ],
  ];

  it.each(mistakes)(
    "refuses %s, naming the resource, the property and what is allowed",
    async (_mistake, properties, expected) => {
      project.write({ resources: { acme: { type: "dmarc:index:Organization", properties } } });
      const preview = await project.run(["preview"]);
      expect(preview.code, preview.stdout).not.toBe(0);
      for (const pattern of expected) expect(`${preview.stdout}${preview.stderr}`).toMatch(pattern);
      expect(await emulatorRequests(emulator)).toBe(0);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "refuses the provider's bad or missing dmarc:* settings at preview, naming the key and its variable",
    async () => {
      project.write({ resources: { acme: { type: "dmarc:index:Organization", properties: { name: "Acme" } } } });
      const refusal = async (): Promise<string> => {
        const preview = await project.run(["preview"]);
        const output = `${preview.stdout}${preview.stderr}`;
        expect(preview.code, output).not.toBe(0);
        expect(output).not.toContain(emulator.partner.clientSecret);
        return output;
      };
      await project.ok(["config", "set", "dmarc:requestsPerMinute", "fast"]);
      expect(await refusal()).toMatch(
        /dmarc:requestsPerMinute \(environment variable DMARC_REQUESTS_PER_MINUTE\) must be a number; got "fast"/,
      );
      await project.ok(["config", "rm", "dmarc:requestsPerMinute"]);
      await project.ok(["config", "rm", "dmarc:clientId"]);
      expect(await refusal()).toMatch(/dmarc:clientId .*must be set together/);
      expect(await emulatorRequests(emulator)).toBe(0);
    },
    ENGINE_TIMEOUT,
  );
});

async function emulatorRequests(emulator: EmulatorHandle): Promise<number> {
  return (await emulator.control<{ requests: number }>("GET", "/stats")).requests;
}
