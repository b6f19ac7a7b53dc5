import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { parse } from "yaml";
import type { ProviderSettings } from "../../runtime/config";
import { resolvePolicy } from "../../tenant/policy";
import { parseStackPolicies, STACK_POLICY_KEY } from "../../tenant/stackPolicies";
import { countsOf, decideRamps, type EnforceReport, moveOf, type RampGroup, todayUtc } from "./enforce";
import { type PlacedMove, writtenPlacedMoves } from "./write";

// `dmarc-fleet enforce --stack`: the inventory's ramp for a Pulumi program.
// The program keeps each domain's ramp in its stack's configuration file
// (`<project>:dmarcPolicy`, read by `stackPolicies()`); the same key is read
// here from the file, without running the program, decided by the same
// rules on the same evidence, and the moves written back into it, so the
// pull request's diff is the moves and `pulumi up` then publishes them.

export interface StackEnforceOptions {
  /** The stack's configuration file, `Pulumi.<stack>.yaml`. */
  configPath: string;
  /** The project's name: the namespace of its `dmarcPolicy` key. */
  projectName: string;
  stackName: string;
  /** The provider settings (`dmarc:*`): the service and the credentials the evidence is read with. */
  settings: ProviderSettings;
  /** The day of the decision, `YYYY-MM-DD`; default today (UTC). */
  today?: string;
  /** Write the moves into the configuration file. */
  write?: boolean;
}

/** Each domain's ramp the file holds, in its order; a `PolicyError` naming the file, the domain and the key. */
function stackGroupOf(text: string, source: string, key: string, stackName: string): RampGroup {
  const config = (parse(text) as { config?: Record<string, unknown> } | null)?.config;
  const policies = parseStackPolicies(config?.[key], `${source}: ${key}`);
  return {
    key,
    name: `stack ${stackName}`,
    domains: [...policies].map(([domain, entry]) => ({ domain, policy: resolvePolicy(entry) })),
  };
}

/** Reads the evidence of every domain the stack's ramps name, decides each, and writes the moves when asked. */
export async function runStackEnforce(options: StackEnforceOptions): Promise<EnforceReport> {
  const source = basename(options.configPath);
  const key = `${options.projectName}:${STACK_POLICY_KEY}`;
  const text = readFileSync(options.configPath, "utf8");
  const group = stackGroupOf(text, source, key, options.stackName);
  const today = options.today ?? todayUtc();
  const { decided, read } = await decideRamps([group], options.settings, today);
  const tenants = decided.filter((decisions) => decisions.domains.length > 0);
  const moves: PlacedMove[] = tenants.flatMap((decisions) =>
    decisions.domains.flatMap(({ domain, decision }) => {
      const move = moveOf(decision);
      return move ? [{ at: ["config", key, domain], ...move }] : [];
    }),
  );
  const written = options.write === true && moves.length > 0;
  if (written)
    writeFileSync(
      options.configPath,
      writtenPlacedMoves(text, moves, {
        since: "QUOTE_DOUBLE",
        check: (after) => stackGroupOf(after, source, key, options.stackName),
      }),
    );
  const file = { stack: options.stackName, config: source };
  return { command: "enforce", ...file, today, read, tenants, totals: countsOf(tenants), written };
}
