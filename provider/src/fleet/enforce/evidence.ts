import type { DmarcClient } from "../../client";
import type { EvidenceRead } from "./ramp";

// The ramp's evidence, read in as few requests as the service allows: the
// pass-rate route names domains and no organisation, up to a page of them a
// request, so every domain sharing an evidence window goes in one query
// whatever tenant holds it; the client splits it into pages of 100.

/** One domain to read, over the days that judge its stage. */
export interface EvidenceAsk {
  domain: string;
  from: string;
  to: string;
}

/** The asks in one query per window: domains moved the same day share one. */
function byWindow(asks: readonly EvidenceAsk[]): Map<string, EvidenceAsk[]> {
  const groups = new Map<string, EvidenceAsk[]>();
  for (const ask of asks) {
    const window = `${ask.from}..${ask.to}`;
    groups.set(window, [...(groups.get(window) ?? []), ask]);
  }
  return groups;
}

/**
 * Each domain's figures over its window: a domain the answer has no row for
 * had no reports; a query that fails gives each of its domains the failure,
 * and the others their figures.
 */
export async function readEvidence(
  client: Pick<DmarcClient, "authPassRates">,
  asks: readonly EvidenceAsk[],
): Promise<Map<string, EvidenceRead>> {
  const groups = [...byWindow(asks).values()];
  const answers = await Promise.all(
    groups.map(async (group) => {
      const [first] = group as [EvidenceAsk];
      const domains = group.map((ask) => ask.domain);
      try {
        const rows = await client.authPassRates({ domains, from: first.from, to: first.to });
        const byDomain = new Map(rows.map((row) => [row.domain, row]));
        return domains.map((domain): [string, EvidenceRead] => {
          const row = byDomain.get(domain);
          // A row of no messages has rates of nothing: it is no evidence either.
          const figures =
            row && row.messages > 0
              ? { dkimPassRate: row.dkimPassRate, spfPassRate: row.spfPassRate, messages: row.messages }
              : undefined;
          return [domain, { figures }];
        });
      } catch (error) {
        const failure = error instanceof Error ? error.message : String(error);
        return domains.map((domain): [string, EvidenceRead] => [domain, { failure }]);
      }
    }),
  );
  return new Map(answers.flat());
}
