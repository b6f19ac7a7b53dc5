import { SETTINGS } from "pulumi-dmarc-partner";
import { CLIENT_DEFAULTS } from "pulumi-dmarc-partner/client";
import { FLEET_SPEC } from "pulumi-dmarc-partner/fleet";
import { describe, expect, it } from "vitest";
import type { CommandSpec } from "../../provider/src/cli/options";
import { packageSchema } from "../../provider/src/plugin/schema";
import { RECOVER_SPEC } from "../../provider/src/recovery/cli";
import { readDoc, tableAfter } from "./markdown";

// The documentation's reference tables say what the code says: every
// setting with its environment variable and default, and each command's
// options and exit codes. A change to one without the other fails here.

const code = (cell: string | undefined) => /^`([^`]*)`$/.exec(cell ?? "")?.[1];

describe("docs/configuration.md's settings table", () => {
  const rows = tableAfter(readDoc("docs/configuration.md"), "Settings");

  it("lists every setting once, and nothing else", () => {
    expect(rows.map(([key]) => code(key))).toEqual(SETTINGS.map((setting) => `dmarc:${setting.key}`));
  });

  it.each(SETTINGS.map((setting) => [setting.key, setting] as const))(
    "gives dmarc:%s its environment variable and default",
    (_key, setting) => {
      const row = rows.find(([key]) => code(key) === `dmarc:${setting.key}`);
      expect(code(row?.[1])).toBe(setting.env);
      const defaults: Record<string, number> = CLIENT_DEFAULTS;
      const fallback = defaults[setting.key];
      expect(row?.[2]?.split(/[ :]/)[0]).toBe(fallback === undefined ? "none" : String(fallback));
    },
  );
});

describe("docs/installation-configuration.md's settings, the Registry's page", () => {
  const rows = tableAfter(readDoc("docs/installation-configuration.md"), "Configuration");

  it("lists every setting the schema declares, with the variable the SDKs and the provider read, its type and its secrecy", () => {
    const { variables } = packageSchema("1.2.3").config;
    expect(rows.map(([key, env, type, , secret]) => [code(key), code(env), type, secret])).toEqual(
      Object.entries(variables).map(([key, variable]) => [
        `dmarc:${key}`,
        variable.defaultInfo?.environment[0],
        variable.type,
        variable.secret ? "yes" : "no",
      ]),
    );
    const settings = new Map(SETTINGS.map((setting) => [`dmarc:${setting.key}`, setting.env]));
    expect(rows.length).toBe(SETTINGS.length);
    expect(rows.filter(([key, env]) => settings.get(code(key) ?? "") !== code(env))).toEqual([]);
  });
});

describe.each([
  ["dmarc-fleet", "docs/guides/fleets.md", FLEET_SPEC],
  ["dmarc-recover", "docs/guides/recovery.md", RECOVER_SPEC],
] as const)("%s's tables in %s", (_command, page, spec: CommandSpec) => {
  const text = readDoc(page);

  it("list its exit codes with the meanings the command prints", () => {
    const rows = tableAfter(text, "Exit codes").map(([number, meaning]) => ({ code: Number(number), meaning }));
    expect(rows).toEqual(spec.exitCodes.map(({ code, meaning }) => ({ code, meaning })));
  });

  it("list every option it takes, and no other", () => {
    const options = tableAfter(text, "Options").map(([option]) => /--([a-z-]+)/.exec(option ?? "")?.[1]);
    expect(options.sort()).toEqual(spec.options.map((option) => option.name).sort());
  });

  it("name the commands an option applies to, as the command checks them", () => {
    // A meaning that starts "`preview`, `up`:" or "`up` only:" limits the option to those commands.
    const scopes = tableAfter(text, "Options").map(([option, meaning]) => ({
      name: /--([a-z-]+)/.exec(option ?? "")?.[1],
      commands: [
        ...(/^((?:`[a-z-]+`(?:, )?)+)(?: only)?:/.exec(meaning ?? "")?.[1]?.matchAll(/`([a-z-]+)`/g) ?? []),
      ].map((match) => match[1]),
    }));
    expect(scopes.sort((a, b) => String(a.name).localeCompare(String(b.name)))).toEqual(
      spec.options
        .map((option) => ({ name: option.name, commands: [...(option.commands ?? [])] }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
  });
});
