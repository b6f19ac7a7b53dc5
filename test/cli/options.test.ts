import { FLEET_EXIT, FLEET_SPEC } from "pulumi-dmarc-partner/fleet";
import { describe, expect, it } from "vitest";
import { checkOptionsApply, exitCodeTable, parseOptions, UsageError, usageText } from "../../provider/src/cli/options";
import { RECOVER_SPEC } from "../../provider/src/recovery/cli";

// Each command's parser and help text are read off one table: every option
// the parser takes is in the help, and an option the table does not have,
// or one given to a command it does not apply to, is refused by name.

describe.each([
  ["dmarc-fleet", FLEET_SPEC],
  ["dmarc-recover", RECOVER_SPEC],
])("%s's option table", (_command, spec) => {
  it("shows every option and exit code in the usage text", () => {
    const text = usageText(spec);
    for (const option of spec.options) expect(text).toContain(`--${option.name}`);
    const lines = text.split("\n").map((line) => line.trim());
    for (const exit of spec.exitCodes) expect(lines).toContain(`${exit.code}  ${exit.meaning}`);
    expect(exitCodeTable(spec).split("\n")).toHaveLength(spec.exitCodes.length + 2);
  });

  it("parses every option it lists, and refuses one it does not", () => {
    const argv = spec.options.flatMap((option) =>
      option.type === "boolean" ? [`--${option.name}`] : [`--${option.name}`, "x"],
    );
    const { values } = parseOptions(spec, argv);
    expect(Object.keys(values).sort()).toEqual(spec.options.map((option) => option.name).sort());
    expect(() => parseOptions(spec, ["--no-such-option"])).toThrow(UsageError);
    expect(() => parseOptions(spec, ["--no-such-option"])).toThrow(/no-such-option/);
  });
});

describe("dmarc-fleet's options", () => {
  it("refuses an option given to a command it does not apply to", () => {
    const { values } = parseOptions(FLEET_SPEC, ["preview", "--audit-log"]);
    expect(() => checkOptionsApply(FLEET_SPEC, "preview", values)).toThrow(
      "--audit-log applies to drift, not to preview",
    );
    expect(() => checkOptionsApply(FLEET_SPEC, "drift", values)).not.toThrow();
  });

  it("has one distinct code per exit", () => {
    const codes = Object.values(FLEET_EXIT).map((exit) => exit.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(FLEET_SPEC.exitCodes).toEqual(Object.values(FLEET_EXIT));
  });
});
