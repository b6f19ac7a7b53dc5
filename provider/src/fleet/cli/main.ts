import { UsageError, usageText } from "../../cli/options";
import {
  type EnforceInvocation,
  type FleetInvocation,
  fleetOptionsFromArgs,
  type ImportInvocation,
  type ReportInvocation,
} from "./arguments";
import { ENFORCE_COMMAND, FLEET_EXIT, FLEET_SPEC, IMPORT_COMMAND, REPORT_COMMAND } from "./commandSpec";
import { enforceCommand, errorMessage, failureCode, fleetCommand, importCommand, reportCommand } from "./commands";

// `dmarc-fleet`: reads the command line, then hands it to its command.

/** The command; answers one of {@link FLEET_EXIT}'s codes. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  let parsed: FleetInvocation | ImportInvocation | EnforceInvocation | ReportInvocation | "help";
  try {
    parsed = await fleetOptionsFromArgs(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${usageText(FLEET_SPEC)}\n`);
      return FLEET_EXIT.usage.code;
    }
    process.stderr.write(`${errorMessage(error)}\n`);
    return failureCode(error);
  }
  if (parsed === "help") {
    process.stdout.write(`${usageText(FLEET_SPEC)}\n`);
    return FLEET_EXIT.ok.code;
  }
  if (parsed.command === IMPORT_COMMAND) return importCommand(parsed);
  if (parsed.command === ENFORCE_COMMAND) return enforceCommand(parsed);
  if (parsed.command === REPORT_COMMAND) return reportCommand(parsed);
  return fleetCommand(parsed);
}
