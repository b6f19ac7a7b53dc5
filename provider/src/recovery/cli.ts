import { parseArgs } from "node:util";
import { closeClients } from "../client";
import { EXIT_CODES, recoverStack } from "./recover";
import { formatReport } from "./report";
import { PulumiCommandFailed } from "./stack";

const UPDATE_IN_PROGRESS = /Another update is currently in progress/;

const USAGE = `Usage: dmarc-recover --stack <name> [--cwd <project folder>] [--dry-run] [--backup-dir <folder>] [--unlock-other-hosts]

Recovers a stack an interrupted \`pulumi up\` left behind: removes the lock of a
run that is gone, restores a checkpoint cut short, settles each pending
operation against the service (adopts, recreates or drops), then says what to
run next (\`pulumi up\`). The provider settings come from the stack's dmarc:*
config and the DMARC_* environment, as the provider reads them.

  --stack               the stack (required)
  --cwd                 the project folder, where Pulumi.yaml is (default: .)
  --dry-run             print what would be done, change nothing
  --backup-dir          where the copy of the starting state goes (default: <cwd>/.dmarc-recover)
  --unlock-other-hosts  also remove locks taken on other hosts (runners that are gone)

Exit codes: 0 recovered, or nothing to recover, or dry run; 1 failure;
2 bad usage; 3 refused: a run of the stack is still alive; 4 operations left
that need a person (listed).`;

/** Runs the command with `argv` (without node and the script); answers the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return EXIT_CODES.usage;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT_CODES.ok;
  }
  if (!values.stack) {
    process.stderr.write(`--stack is required\n\n${USAGE}\n`);
    return EXIT_CODES.usage;
  }
  try {
    const report = await recoverStack({
      stackName: values.stack,
      workDir: values.cwd,
      dryRun: values["dry-run"],
      backupDir: values["backup-dir"],
      unlockOtherHosts: values["unlock-other-hosts"],
    });
    const out = report.exitCode === EXIT_CODES.ok ? process.stdout : process.stderr;
    out.write(`${formatReport(report).join("\n")}\n`);
    return report.exitCode;
  } catch (error) {
    if (error instanceof PulumiCommandFailed && UPDATE_IN_PROGRESS.test(error.output)) {
      // Backends other than files keep the lock themselves: only their own cancel removes it.
      process.stderr.write(
        `refused: the backend reports an update of stack ${values.stack} in progress. If no run of it is alive any more, run \`pulumi cancel --yes --stack ${values.stack}\`, then dmarc-recover again.\n`,
      );
      return EXIT_CODES.refused;
    }
    process.stderr.write(`dmarc-recover failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CODES.failed;
  } finally {
    await closeClients();
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    options: {
      stack: { type: "string", short: "s" },
      cwd: { type: "string", short: "C" },
      "dry-run": { type: "boolean" },
      "backup-dir": { type: "string" },
      "unlock-other-hosts": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}
