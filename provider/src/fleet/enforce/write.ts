import { parseDocument, Scalar } from "yaml";
import { parseInventory } from "../../inventory/inventory";
import { type Stage, stageName } from "../../tenant/policy";
import { edited, type KeyText, keysInPlace, lineWidthOf, type TextEdit } from "./keysInPlace";

// `enforce --write`: the moves written as each domain's `stage` and `since`,
// into the inventory or a stack's configuration file, by editing the text
// where they go (./keysInPlace.ts), so the pull request's diff is the moved
// domains' lines and nothing else, in the partner's formatting. What those
// edits do not write (an alias, a block scalar) goes through the YAML
// document, which keeps comments and order but may respace the file.

/** One domain's new place on its ramp, by its position in the inventory. */
export interface PolicyMove {
  tenantIndex: number;
  domainIndex: number;
  stage: Stage;
  since: string;
}

/** One domain's new place on its ramp, by the path of the mapping that holds its `stage` and `since`. */
export interface PlacedMove {
  at: readonly (string | number)[];
  stage: Stage;
  since: string;
}

const KEYS = ["stage", "since"] as const;

/**
 * How `since` is written: plain, or double-quoted where the file is read by
 * Pulumi, whose YAML reader takes a plain `2026-11-25` for a timestamp and
 * gives the program `2026-11-25 00:00:00 +0000 UTC`.
 */
export type SinceStyle = "PLAIN" | "QUOTE_DOUBLE";

const writtenValue = (move: PlacedMove, key: (typeof KEYS)[number]) =>
  key === "stage" ? stageName(move.stage) : move.since;

/** Each value as its text in the file. */
const writtenText = (move: PlacedMove, key: (typeof KEYS)[number], since: SinceStyle) =>
  key === "since" && since === "QUOTE_DOUBLE" ? JSON.stringify(move.since) : writtenValue(move, key);

/** The text with every move these edits can write written in place; the moves left for the document. */
function writtenInPlace(text: string, moves: readonly PlacedMove[], since: SinceStyle) {
  const document = parseDocument(text);
  const width = lineWidthOf(text);
  const edits: TextEdit[] = [];
  const left: PlacedMove[] = [];
  for (const move of moves) {
    const entries = KEYS.map((key): KeyText => [key, writtenText(move, key, since)]);
    const placed = keysInPlace(text, document, move.at, entries, width);
    if (placed) edits.push(...placed);
    else left.push(move);
  }
  return { replaced: edited(text, edits), left };
}

/** A value as the document adds it: `since` in its style. */
function nodeOf(move: PlacedMove, key: (typeof KEYS)[number], since: SinceStyle) {
  const node = new Scalar(writtenValue(move, key));
  if (key === "since") node.type = since;
  return node;
}

/**
 * The text with the moves written; the text itself when there are none, so a
 * run that proposes nothing leaves the file byte for byte. `check` throws
 * when the result would not read back as the file it is, and nothing is written.
 */
export function writtenPlacedMoves(
  text: string,
  moves: readonly PlacedMove[],
  options: { since: SinceStyle; check: (written: string) => void },
) {
  if (moves.length === 0) return text;
  const { replaced, left } = writtenInPlace(text, moves, options.since);
  let written = replaced;
  if (left.length > 0) {
    const document = parseDocument(replaced);
    for (const move of left)
      for (const key of KEYS) document.setIn([...move.at, key], nodeOf(move, key, options.since));
    written = document.toString();
  }
  options.check(written);
  return written;
}

/** The inventory text with the moves written into each domain's `policy`; it must parse as an inventory again. */
export function writtenMoves(text: string, source: string, moves: readonly PolicyMove[]): string {
  const placed = moves.map((move) => ({
    at: ["tenants", move.tenantIndex, "domains", move.domainIndex, "policy"],
    stage: move.stage,
    since: move.since,
  }));
  return writtenPlacedMoves(text, placed, {
    since: "PLAIN",
    check: (written) => parseInventory(written, source),
  });
}
