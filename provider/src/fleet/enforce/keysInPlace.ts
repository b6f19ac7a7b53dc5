import { type Document, isMap, isScalar, isSeq, type Node, type Pair, type YAMLMap } from "yaml";

// Keys set in a YAML file by editing its text where they go, so the file
// keeps the partner's formatting and a review's diff is the changed lines
// alone: a value the file holds is replaced where it stands; a key it lacks
// is added in the mapping's own style, inside a flow mapping on its line
// (unless that line would pass the file's width, where the mapping becomes
// block lines under its key), as lines of its own in a block mapping. The
// comments around them stay where they are.

/** A key and its value as written: a scalar's text, or a mapping of further keys. */
export type KeyText = readonly [key: string, value: string | readonly KeyText[]];

/** One change of the text: what stood from `start` to `end` becomes `value`. */
export interface TextEdit {
  start: number;
  end: number;
  value: string;
}

/** The width a flow mapping's line may grow to when the file has no longer line. */
const DEFAULT_LINE_WIDTH = 120;

/** The width a flow mapping's line may grow to: the file's longest line, and at least {@link DEFAULT_LINE_WIDTH}. */
export function lineWidthOf(text: string): number {
  return Math.max(DEFAULT_LINE_WIDTH, ...text.split("\n").map((line) => line.length));
}

/** The text with the edits made; they must not overlap. */
export function edited(text: string, edits: readonly TextEdit[]): string {
  let result = text;
  for (const edit of [...edits].sort((a, b) => b.start - a.start || b.end - a.end))
    result = `${result.slice(0, edit.start)}${edit.value}${result.slice(edit.end)}`;
  return result;
}

/** Scalar styles whose text is replaced whole by the new value's. */
const REPLACEABLE = new Set(["PLAIN", "QUOTE_DOUBLE", "QUOTE_SINGLE"]);

const flowText = (entries: readonly KeyText[]): string =>
  `{ ${entries.map(([key, value]) => `${key}: ${typeof value === "string" ? value : flowText(value)}`).join(", ")} }`;

const blockLines = (entries: readonly KeyText[], indent: string): string[] =>
  entries.flatMap(([key, value]) =>
    typeof value === "string"
      ? [`${indent}${key}: ${value}`]
      : [`${indent}${key}:`, ...blockLines(value, `${indent}  `)],
  );

/** Where a node stands: the node, and the pair whose value it is (none for a list's item or the root). */
interface Placed {
  node: Node;
  pair: Pair<Node, Node> | undefined;
  /** Whether the node's parent is a flow collection. */
  inFlow: boolean;
}

/** The file's line break: a file checked out with CRLF keeps it on the lines added. */
const lineBreakOf = (text: string) => (text.includes("\r\n") ? "\r\n" : "\n");
const lineStartOf = (text: string, at: number) => text.lastIndexOf("\n", at - 1) + 1;
const columnOf = (text: string, at: number) => at - lineStartOf(text, at);
const rangeOf = (node: Node | null | undefined) => node?.range ?? undefined;

/** The pair of `map` under the plain key `key`. */
function pairOf(map: YAMLMap<Node, Node>, key: string | number): Pair<Node, Node> | undefined {
  return map.items.find((pair) => isScalar(pair.key) && pair.key.value === key);
}

/**
 * The nodes along `path`, as deep as the file has them, and the steps of the
 * path it lacks; undefined where a key stands with no value (`{ policy }`).
 */
function walk(
  document: Document,
  path: readonly (string | number)[],
): { placed: Placed; missing: (string | number)[] } | undefined {
  let placed: Placed = { node: document.contents as Node, pair: undefined, inFlow: false };
  for (const [index, step] of path.entries()) {
    const { node } = placed;
    const inFlow = (isMap(node) || isSeq(node)) && node.flow === true;
    if (isMap(node)) {
      const pair = pairOf(node as YAMLMap<Node, Node>, step);
      if (pair && !pair.value) return undefined;
      if (pair?.value) {
        placed = { node: pair.value, pair, inFlow };
        continue;
      }
    } else if (isSeq(node) && typeof step === "number" && isMap(node.items[step])) {
      placed = { node: node.items[step] as Node, pair: undefined, inFlow };
      continue;
    }
    return { placed, missing: path.slice(index) };
  }
  return { placed, missing: [] };
}

/** The keys a flow mapping lacks, added before its closing brace; its line, if one, kept within `width`. */
function addedToFlow(
  text: string,
  placed: Placed,
  replaced: readonly TextEdit[],
  adds: readonly KeyText[],
  width: number,
) {
  const map = placed.node as YAMLMap<Node, Node>;
  const [start, end] = map.range ?? [0, 0];
  const last = map.items.at(-1);
  const lastEnd = rangeOf(last?.value)?.[1] ?? rangeOf(last?.key)?.[1];
  const inserted: TextEdit =
    lastEnd === undefined
      ? { start, end, value: flowText(adds) }
      : { start: lastEnd, end: lastEnd, value: `, ${flowText(adds).slice(2, -2)}` };
  const edits = [...replaced, inserted];
  const before = text.slice(lineStartOf(text, start), start);
  const after = edited(
    text.slice(start),
    edits.map((edit) => ({ ...edit, start: edit.start - start, end: edit.end - start })),
  );
  const line = `${before}${after.split(/\r?\n/)[0]}`;
  if (text.slice(start, end).includes("\n") || line.length <= width) return edits;
  return flowAsBlock(text, placed, replaced, adds);
}

/** A flow mapping too long for its line as block lines under its key; undefined where that cannot be done alone. */
function flowAsBlock(text: string, placed: Placed, replaced: readonly TextEdit[], adds: readonly KeyText[]) {
  const map = placed.node as YAMLMap<Node, Node>;
  const keyEnd = rangeOf(placed.pair?.key)?.[1];
  const end = map.range?.[1];
  const keyStart = rangeOf(placed.pair?.key)?.[0];
  if (placed.inFlow || keyStart === undefined || keyEnd === undefined || end === undefined) return undefined;
  const entries: KeyText[] = [];
  for (const pair of map.items) {
    const [start, stop] = rangeOf(pair.key) ?? [0, 0];
    const [valueStart, valueEnd] = rangeOf(pair.value) ?? [stop, stop];
    const replacement = replaced.find((edit) => edit.start === valueStart);
    const value = replacement?.value ?? text.slice(valueStart, valueEnd);
    const key = text.slice(start, stop);
    if (value.includes("\n") || key.includes("\n")) return undefined;
    entries.push([key, value]);
  }
  const indent = " ".repeat(columnOf(text, keyStart) + 2);
  const lineBreak = lineBreakOf(text);
  return [{ start: keyEnd, end, value: `:${lineBreak}${blockLines([...entries, ...adds], indent).join(lineBreak)}` }];
}

/** The keys a block mapping lacks, as lines of their own after its last entry, at its indentation. */
function addedToBlock(text: string, map: YAMLMap<Node, Node>, adds: readonly KeyText[]): TextEdit[] | undefined {
  const first = rangeOf(map.items[0]?.key);
  const last = map.items.at(-1);
  const lastEnd = rangeOf(last?.value)?.[1] ?? rangeOf(last?.key)?.[1];
  if (first === undefined || lastEnd === undefined) return undefined;
  const lineBreak = lineBreakOf(text);
  const lines = blockLines(adds, " ".repeat(columnOf(text, first[0]))).join(lineBreak);
  const newline = text.indexOf("\n", lastEnd - 1);
  return newline < 0
    ? [{ start: text.length, end: text.length, value: `${lineBreak}${lines}${lineBreak}` }]
    : [{ start: newline + 1, end: newline + 1, value: `${lines}${lineBreak}` }];
}

/**
 * The edits that give the mapping at `path` the keys of `entries` (a key
 * the path's last step names added where the file lacks it), in the file's
 * formatting; undefined where the file holds something these edits do not
 * write (an alias, a block scalar, a value that is not a mapping), for the
 * caller to write another way.
 */
export function keysInPlace(
  text: string,
  document: Document,
  path: readonly (string | number)[],
  entries: readonly KeyText[],
  width: number,
): TextEdit[] | undefined {
  const walked = walk(document, path);
  if (walked === undefined) return undefined;
  const { placed, missing } = walked;
  if (!isMap(placed.node) || missing.length > 1 || (missing.length === 1 && typeof missing[0] !== "string"))
    return undefined;
  const map = placed.node as YAMLMap<Node, Node>;
  const replaced: TextEdit[] = [];
  const adds: KeyText[] = [];
  if (missing.length === 1) adds.push([String(missing[0]), entries]);
  else
    for (const [key, value] of entries) {
      const node = pairOf(map, key)?.value;
      if (node === undefined || node === null) adds.push([key, value]);
      else if (
        isScalar(node) &&
        node.value !== null &&
        REPLACEABLE.has(String(node.type)) &&
        node.range &&
        typeof value === "string"
      )
        replaced.push({ start: node.range[0], end: node.range[1], value });
      else return undefined;
    }
  if (adds.length === 0) return replaced;
  if (map.flow) return addedToFlow(text, placed, replaced, adds, width);
  const added = addedToBlock(text, map, adds);
  return added && [...replaced, ...added];
}
