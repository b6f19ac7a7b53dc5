import { parseDocument } from "yaml";
import { parseInventory } from "../inventory/inventory";
import { type Stage, stageName } from "../inventory/policy";

// `enforce --write`: the moves written into the inventory as each domain's
// `policy.stage` and `policy.since`, through the YAML document so comments,
// key order and every other line stay as the partner wrote them.

/** One domain's new place on its ramp, by its position in the file. */
export interface PolicyMove {
  tenantIndex: number;
  domainIndex: number;
  stage: Stage;
  since: string;
}

/**
 * The inventory text with the moves written; the text itself when there are
 * none, so a run that proposes nothing leaves the file byte for byte. The
 * result must parse as an inventory again, or nothing is written.
 */
export function writtenMoves(text: string, source: string, moves: readonly PolicyMove[]): string {
  if (moves.length === 0) return text;
  const document = parseDocument(text);
  for (const move of moves) {
    const policy = ["tenants", move.tenantIndex, "domains", move.domainIndex, "policy"];
    document.setIn([...policy, "stage"], stageName(move.stage));
    document.setIn([...policy, "since"], move.since);
  }
  const written = document.toString();
  parseInventory(written, source);
  return written;
}
