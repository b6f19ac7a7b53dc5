import { signLine } from "../checkpoint/interruption";
import { type CommandSpec, parseOptions, stringOption, UsageError, usageText } from "../cli/options";
import { closeClients } from "../client";
import { EXIT_CODES, recoverStack } from "./recover";
import { formatReport } from "./report";
import { PulumiCommandFailed } from "./stack";

export const RECOVER_SPEC: CommandSpec = {
  synopsis: "dmarc-recover --stack <name> [options]",
  summary:
    "Recovers a stack an interrupted `pulumi up` left behind: removes the lock of a run that is gone, restores a checkpoint cut short, settles each pending operation against the service (adopts, recreates or drops), then says what to run next (`pulumi up`). The provider settings come from the stack's dmarc:* config and the DMARC_* environment, as the provider reads them.",
  options: [
    { name: "stack", type: "string", short: "s", value: "<name>", description: "the stack (required)" },
    {
      name: "cwd",
      type: "string",
      short: "C",
      value: "<dir>",
      description: "the project folder, where Pulumi.yaml is (default: .)",
    },
    { name: "dry-run", type: "boolean", description: "print what would be done, change nothing" },
    {
      name: "backup-dir",
      type: "string",
      value: "<dir>",
      description: "where the copy of the starting state goes (default: <cwd>/.dmarc-recover)",
    },
    {
      name: "unlock-other-hosts",
      type: "boolean",
      description: "also remove locks taken on other hosts (runners that are gone)",
    },
    {
      name: "keep-orphans",
      type: "boolean",
      description:
        "only report the processes a killed run left behind, and refuse (default: let them finish their calls, then stop them)",
    },
    {
      name: "adopt",
      type: "string",
      value: "<urn>=<id>",
      multiple: true,
      description:
        "for a pending create left unsettled: record the object with this id as what it made (one of the candidates listed; never one another stack records)",
    },
    {
      name: "drop",
      type: "string",
      value: "<urn>",
      multiple: true,
      description: "for a pending create left unsettled: forget it; the next pulumi up creates the object anew",
    },
    { name: "help", type: "boolean", short: "h", description: "print this text" },
  ],
  exitCodes: [
    { code: EXIT_CODES.ok, meaning: "recovered, or nothing to recover, or dry run" },
    { code: EXIT_CODES.failed, meaning: "failure" },
    { code: EXIT_CODES.usage, meaning: "bad usage" },
    {
      code: EXIT_CODES.refused,
      meaning: "refused: a run of the stack is still alive, or --keep-orphans found processes of a killed run",
    },
    {
      code: EXIT_CODES.unsettled,
      meaning:
        "operations left that need a person: listed, each unsettled create with the objects found and the --adopt or --drop that settles it",
    },
  ],
};

const listOption = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

/**
 * Runs the command with `argv` (without node and the script); answers the
 * exit code. `command` is how the person runs it, for the commands the report
 * suggests: the plugin's executable runs it as `pulumi-resource-dmarc recover`.
 */
export async function main(argv: readonly string[], command = "npx dmarc-recover"): Promise<number> {
  let values: ReturnType<typeof parseOptions>["values"];
  try {
    values = parseOptions(RECOVER_SPEC, argv).values;
    if (!values.help && !values.stack) throw new UsageError("--stack is required");
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usageText(RECOVER_SPEC)}\n`);
    return EXIT_CODES.usage;
  }
  if (values.help) {
    process.stdout.write(`${usageText(RECOVER_SPEC)}\n`);
    return EXIT_CODES.ok;
  }
  const stackName = stringOption(values, "stack") as string;
  try {
    const report = await recoverStack({
      stackName,
      workDir: stringOption(values, "cwd"),
      dryRun: values["dry-run"] === true,
      backupDir: stringOption(values, "backup-dir"),
      unlockOtherHosts: values["unlock-other-hosts"] === true,
      keepOrphans: values["keep-orphans"] === true,
      decisions: { adopt: listOption(values.adopt), drop: listOption(values.drop) },
    });
    const out = report.exitCode === EXIT_CODES.ok ? process.stdout : process.stderr;
    out.write(`${formatReport(report, { command, stackName }).join("\n")}\n`);
    return report.exitCode;
  } catch (error) {
    if (error instanceof PulumiCommandFailed && signLine(error.output, "updateInProgress")) {
      // Backends other than files keep the lock themselves: only their own cancel removes it.
      process.stderr.write(
        `refused: the backend reports an update of stack ${stackName} in progress. If no run of it is alive any more, run \`pulumi cancel --yes --stack ${stackName}\`, then dmarc-recover again.\n`,
      );
      return EXIT_CODES.refused;
    }
    process.stderr.write(`dmarc-recover failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CODES.failed;
  } finally {
    await closeClients();
  }
}
