import type { CommandSpec } from "../../cli/options";
import { DEFAULT_IMPORT_ON_DELETE } from "../../discovery/importer";
import { TenantOnDelete } from "../../tenant/schema";
import { COMMENT_LIMIT } from "../findings/markdown";
import { FLEET_COMMANDS } from "../fleetOptions";
import { DEFAULT_SHARD_SIZE } from "../plan/assignment";
import { DEFAULT_AUDIT_LOG_MARGIN_SECONDS } from "../plan/auditedDrift";
import { DEFAULT_MAX_OFFBOARD } from "../plan/offboardingGate";

// `dmarc-fleet`'s command line as one table: its commands, options, usage
// text and exit codes. Reading it is arguments.ts's job, running it main.ts's.

/**
 * `dmarc-fleet`'s exit codes; every code a run can end with is here, and the
 * usage text and docs are read off it. A failure outranks every finding, so
 * a pipeline never mistakes a broken run for a plan, drift or a refusal; and
 * a person's decision outranks a failure, since running again cannot help.
 */
export const FLEET_EXIT = {
  ok: { code: 0, meaning: "done: every shard ran (or was skipped as unchanged), and none of the findings below" },
  failed: {
    code: 1,
    meaning:
      "failed: a shard or an import --check failed, a report's read of the service failed, or the backend or the service could not be reached",
  },
  usage: { code: 2, meaning: "bad usage: an unknown option, or an inventory or configuration that does not check" },
  changes: {
    code: 3,
    meaning: "changes pending (preview --detailed-exitcode): the plan creates, updates, replaces or deletes something",
  },
  drift: {
    code: 4,
    meaning:
      "drift found (drift): an object differs from its shard's state or is missing on the service; with --fail-on-unmanaged also an organisation no shard manages",
  },
  refused: {
    code: 5,
    meaning:
      "refused (preview, up, destroy): an offboarding was not approved, over --max-offboard, or would delete an object another stack records; the tenant was left as it is, the rest ran",
  },
  moves: {
    code: 6,
    meaning:
      "policy moves proposed (enforce --detailed-exitcode): a domain starts its ramp, advances or steps back; with --write they are in the inventory or the stack's configuration",
  },
  person: {
    code: 7,
    meaning:
      "a person must decide: a tenant is declared in two places on the backend (preview, up: refused before any write, both places named), or a shard's recovery left a create unsettled (that shard failed: its report lists the objects found and the command with --adopt or --drop that settles it)",
  },
} as const;

/** The command that writes the inventory instead of running it. */
export const IMPORT_COMMAND = "import";

/** The command that proposes policy moves from the service's evidence, and writes them into the inventory. */
export const ENFORCE_COMMAND = "enforce";

/** The command that shows the fleet as one page instead of running it. */
export const REPORT_COMMAND = "report";

/** The commands that run no shard. */
const FILE_COMMANDS = [IMPORT_COMMAND, ENFORCE_COMMAND, REPORT_COMMAND] as const;

export const ON_DELETE_VALUES = TenantOnDelete.options;

export const FLEET_SPEC: CommandSpec = {
  synopsis: `dmarc-fleet <${[...FLEET_COMMANDS, ...FILE_COMMANDS].join("|")}> [options]`,
  summary:
    "Runs a tenants inventory as many small stacks (\"shards\") side by side, under one request budget; import writes the partner's existing organisations into the inventory; enforce proposes DMARC policy moves from the service's evidence; report shows the whole fleet on one page.",
  options: [
    {
      name: "inventory",
      type: "string",
      value: "<file>",
      description: "the tenants YAML file (default: tenants.yaml in --cwd)",
    },
    {
      name: "cwd",
      type: "string",
      value: "<dir>",
      description: "the Pulumi project folder, with Pulumi.yaml and node_modules (default: .)",
    },
    {
      name: "config-stack",
      type: "string",
      value: "<name>",
      description:
        "stack whose configuration and secrets provider every shard takes (default: the project's selected stack)",
    },
    {
      name: "fleet",
      type: "string",
      value: "<name>",
      description: "stem of the shard stacks' names (default: the config stack's name, else \"fleet\")",
    },
    {
      name: "backend",
      type: "string",
      value: "<url>",
      description: "Pulumi backend (default: the one you are logged in to)",
    },
    {
      name: "shard-size",
      type: "string",
      value: "<n>",
      description: `tenants per new shard (default: ${DEFAULT_SHARD_SIZE})`,
    },
    {
      name: "concurrency",
      type: "string",
      value: "<n>",
      description: "shards run at once (default: the machine's cores)",
    },
    {
      name: "shard",
      type: "string",
      value: "<name>",
      multiple: true,
      description: "only this shard; repeat for several (e.g. one CI job each)",
      commands: FLEET_COMMANDS,
    },
    {
      name: "unlock-other-hosts",
      type: "boolean",
      description:
        "when a shard a killed run left behind is recovered, remove its lock even if another host took it (a CI job run again on a new runner; safe when the workflow lets one run deploy at a time)",
      commands: ["preview", "up", "refresh", "drift", "destroy"],
    },
    {
      name: "adopt",
      type: "string",
      value: "<urn>=<id>",
      multiple: true,
      description:
        "for a create a shard's recovery left unsettled: record the object with this id as what it made (one of the candidates its report lists); repeat for several",
      commands: ["preview", "up", "refresh", "drift", "destroy"],
    },
    {
      name: "drop",
      type: "string",
      value: "<urn>",
      multiple: true,
      description:
        "for a create a shard's recovery left unsettled: forget it, and the shard's next up makes the object anew; repeat for several",
      commands: ["preview", "up", "refresh", "drift", "destroy"],
    },
    {
      name: "all",
      type: "boolean",
      description: "run every shard, not only the due ones (changed, failed, interrupted or drifted)",
      commands: ["preview", "up"],
    },
    {
      name: "refresh",
      type: "boolean",
      description:
        "refresh every existing shard first, so objects changed or deleted outside the fleet are set back (shards where drift or refresh found drift are refreshed anyway)",
      commands: ["preview", "up"],
    },
    {
      name: "allow-offboard",
      type: "string",
      value: "<key>",
      multiple: true,
      description:
        "approve offboarding this deployed tenant the inventory no longer lists, in this run only; repeat for several (the inventory's offboard: section approves for every run)",
      commands: ["preview", "up"],
    },
    {
      name: "max-offboard",
      type: "string",
      value: "<n>",
      description: `most offboardings one run carries out; with more approved, all are refused (default: ${DEFAULT_MAX_OFFBOARD})`,
      commands: ["preview", "up"],
    },
    {
      name: "detailed-exitcode",
      type: "boolean",
      description: `exit ${FLEET_EXIT.changes.code} when the plan has changes (preview), ${FLEET_EXIT.moves.code} when policy moves are proposed (enforce)`,
      commands: ["preview", ENFORCE_COMMAND],
    },
    {
      name: "fail-on-unmanaged",
      type: "boolean",
      description: `exit ${FLEET_EXIT.drift.code} also for organisations no shard manages (default: listed only, as onDelete: keep leaves them on purpose)`,
      commands: ["drift"],
    },
    {
      name: "audit-log",
      type: "boolean",
      description:
        "refresh only shards whose organisations the service's audit log shows changed since their last clean drift (domains, groups, users, billing: not webhooks or names); one request per organisation instead of a refresh",
      commands: ["drift"],
    },
    {
      name: "audit-log-margin",
      type: "string",
      value: "<seconds>",
      description: `with --audit-log, how far the service's clock may lag this machine's (default: ${DEFAULT_AUDIT_LOG_MARGIN_SECONDS})`,
      commands: ["drift"],
    },
    {
      name: "markdown",
      type: "string",
      value: "<file>",
      description: `also write the findings per tenant as a pull-request comment to <file> (relative to --cwd), under ${COMMENT_LIMIT.toLocaleString("en")} characters; for enforce, the pull request's body`,
      commands: ["preview", "up", "drift", ENFORCE_COMMAND],
    },
    {
      name: "write",
      type: "boolean",
      description:
        "write the proposed moves into the inventory (each domain's policy.stage and policy.since), or with --stack into the stack's configuration file, comments kept",
      commands: [ENFORCE_COMMAND],
    },
    {
      name: "stack",
      type: "string",
      value: "<name>",
      description:
        "a Pulumi program's ramp instead of the inventory's: each domain's policy under <project>:dmarcPolicy in Pulumi.<name>.yaml in --cwd, whose settings read the evidence and where --write puts the moves",
      commands: [ENFORCE_COMMAND],
    },
    {
      name: "today",
      type: "string",
      value: "<YYYY-MM-DD>",
      description:
        "the day of the decision: days held count to it, evidence is read to the day before (default: today, UTC)",
      commands: [ENFORCE_COMMAND],
    },
    {
      name: "append",
      type: "boolean",
      description:
        "add only organisations that neither the inventory nor a stack of the backend holds (default: write a new inventory, which must not exist)",
      commands: [IMPORT_COMMAND],
    },
    {
      name: "only",
      type: "string",
      value: "<organization id>",
      multiple: true,
      description: "only this organisation; repeat for several",
      commands: [IMPORT_COMMAND],
    },
    {
      name: "check",
      type: "boolean",
      description:
        "read each object back as up's adoption would and leave out organisations that would not adopt cleanly",
      commands: [IMPORT_COMMAND],
    },
    {
      name: "on-delete",
      type: "string",
      value: `<${ON_DELETE_VALUES.join("|")}>`,
      description: `each imported tenant's onDelete (default: ${DEFAULT_IMPORT_ON_DELETE}: removing it from the file leaves the service alone)`,
      commands: [IMPORT_COMMAND],
    },
    {
      name: "html",
      type: "string",
      value: "<dir>",
      description: `write the fleet's page, one self-contained file, to <dir>/index.html (relative to --cwd)`,
      commands: [REPORT_COMMAND],
    },
    {
      name: "until",
      type: "string",
      value: "<YYYY-MM-DD>",
      description:
        "last day of the 30 days of pass rates on the page (default: yesterday, the last day with whole reports)",
      commands: [REPORT_COMMAND],
    },
    { name: "json", type: "boolean", description: "print the report as JSON on stdout" },
    { name: "help", type: "boolean", short: "h", description: "print this text" },
  ],
  exitCodes: Object.values(FLEET_EXIT),
};
