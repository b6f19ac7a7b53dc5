import { parseArgs } from "node:util";

// A command's options, usage text and exit codes, declared once as tables:
// the parser and the help text are both read off them, so neither can list
// an option the other does not know.

interface OptionSpec {
  /** The long name, without `--`. */
  name: string;
  /** `string` takes a value; `boolean` is a switch. */
  type: "string" | "boolean";
  /** One letter for `-x`. */
  short?: string;
  /** The value's placeholder in the usage text, e.g. `<file>`. */
  value?: string;
  /** May be given several times; the values come as a list. */
  multiple?: boolean;
  /** What it does, and its default when it has one. */
  description: string;
  /** The commands it applies to, for commands with subcommands; every one when absent. */
  commands?: readonly string[];
}

export interface ExitCode {
  code: number;
  /** What the code means, as the usage text and the docs say it. */
  meaning: string;
}

export interface CommandSpec {
  /** The first usage line, e.g. `dmarc-recover --stack <name> [options]`. */
  synopsis: string;
  /** What the command does, a paragraph. */
  summary: string;
  options: readonly OptionSpec[];
  exitCodes: readonly ExitCode[];
}

/** A command line the table does not accept; its message says what, and the usage follows it. */
export class UsageError extends Error {
  override name = "UsageError";
}

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** The options and positionals of `argv`, checked against the table. */
export function parseOptions(
  spec: CommandSpec,
  argv: readonly string[],
): { values: OptionValues; positionals: string[] } {
  const options = Object.fromEntries(
    spec.options.map((option) => [
      option.name,
      {
        type: option.type,
        ...(option.short ? { short: option.short } : {}),
        ...(option.multiple ? { multiple: true } : {}),
      },
    ]),
  );
  try {
    const parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
    return { values: parsed.values as OptionValues, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Refuses an option given with a command it does not apply to. */
export function checkOptionsApply(spec: CommandSpec, command: string, values: OptionValues): void {
  for (const option of spec.options) {
    if (values[option.name] === undefined || !option.commands || option.commands.includes(command)) continue;
    throw new UsageError(`--${option.name} applies to ${option.commands.join(", ")}, not to ${command}`);
  }
}

function optionLabel(option: OptionSpec): string {
  const short = option.short ? `-${option.short}, ` : "";
  const value = option.type === "string" ? ` ${option.value ?? "<value>"}` : "";
  return `${short}--${option.name}${value}`;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line !== "" && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** The help text: synopsis, summary, one entry per option (with the commands it applies to), the exit codes. */
export function usageText(spec: CommandSpec): string {
  const labels = spec.options.map(optionLabel);
  const column = Math.min(28, Math.max(...labels.map((label) => label.length)) + 2);
  const describe = (option: OptionSpec, index: number) => {
    const label = labels[index] ?? "";
    const scope = option.commands ? ` (${option.commands.join(", ")})` : "";
    const text = wrap(`${option.description}${scope}`, 100 - column - 2);
    const first = label.length + 2 <= column ? `  ${label.padEnd(column)}${text[0] ?? ""}` : `  ${label}`;
    const rest = label.length + 2 <= column ? text.slice(1) : text;
    return [first, ...rest.map((line) => `  ${" ".repeat(column)}${line}`)];
  };
  return [
    `Usage: ${spec.synopsis}`,
    "",
    ...wrap(spec.summary, 80),
    "",
    ...spec.options.flatMap(describe),
    "",
    "Exit codes:",
    ...spec.exitCodes.map((exit) => `  ${String(exit.code).padStart(2)}  ${exit.meaning}`),
  ].join("\n");
}

/** A documentation table of a command's exit codes, in Markdown. */
export function exitCodeTable(spec: CommandSpec): string {
  return [
    "| code | meaning |",
    "| --- | --- |",
    ...spec.exitCodes.map((exit) => `| ${exit.code} | ${exit.meaning} |`),
  ].join("\n");
}

/** A whole number of at least `min` from a string option, or undefined when it was not given. */
export function wholeNumber(values: OptionValues, name: string, min = 1): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (typeof raw !== "string" || !Number.isInteger(value) || value < min)
    throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${String(raw)}"`);
  return value;
}

export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

export function listOption(values: OptionValues, name: string): string[] | undefined {
  const value = values[name];
  return Array.isArray(value) ? value : undefined;
}
