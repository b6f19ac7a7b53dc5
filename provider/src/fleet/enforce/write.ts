import { type Document, isScalar, parseDocument } from "yaml";
import { parseInventory } from "../../inventory/inventory";
import { type Stage, stageName } from "../../tenant/policy";

// `enforce --write`: the moves written into the inventory as each domain's
// `policy.stage` and `policy.since`. A value the file holds already is
// replaced where it stands, so the pull request's diff is the moves and
// nothing else; a key the file lacks is added through the YAML document,
// which keeps comments and order but may respace flow collections.

/** One domain's new place on its ramp, by its position in the file. */
export interface PolicyMove {
  tenantIndex: number;
  domainIndex: number;
  stage: Stage;
  since: string;
}

const KEYS = ["stage", "since"] as const;

function pathOf(move: PolicyMove, key: (typeof KEYS)[number]): (string | number)[] {
  return ["tenants", move.tenantIndex, "domains", move.domainIndex, "policy", key];
}

const writtenValue = (move: PolicyMove, key: (typeof KEYS)[number]) =>
  key === "stage" ? stageName(move.stage) : move.since;

/** The text with each plain value the file holds replaced in place; the moves whose keys it lacks. */
function replacedInPlace(text: string, document: Document, moves: readonly PolicyMove[]) {
  const edits: { start: number; end: number; value: string }[] = [];
  const left: PolicyMove[] = [];
  for (const move of moves) {
    const nodes = KEYS.map((key) => document.getIn(pathOf(move, key), true));
    if (!nodes.every((node) => isScalar(node) && node.range && node.type === "PLAIN")) {
      left.push(move);
      continue;
    }
    KEYS.forEach((key, index) => {
      const [start, end] = (nodes[index] as { range: [number, number, number] }).range;
      edits.push({ start, end, value: writtenValue(move, key) });
    });
  }
  let replaced = text;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    replaced = `${replaced.slice(0, edit.start)}${edit.value}${replaced.slice(edit.end)}`;
  return { replaced, left };
}

/**
 * The inventory text with the moves written; the text itself when there are
 * none, so a run that proposes nothing leaves the file byte for byte. The
 * result must parse as an inventory again, or nothing is written.
 */
export function writtenMoves(text: string, source: string, moves: readonly PolicyMove[]): string {
  if (moves.length === 0) return text;
  const { replaced, left } = replacedInPlace(text, parseDocument(text), moves);
  let written = replaced;
  if (left.length > 0) {
    const document = parseDocument(replaced);
    for (const move of left) for (const key of KEYS) document.setIn(pathOf(move, key), writtenValue(move, key));
    written = document.toString();
  }
  parseInventory(written, source);
  return written;
}
