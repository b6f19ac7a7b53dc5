import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../scripts/project.mjs";
import { typeScriptFiles } from "./support/sources";

// Functions that each do one thing: none in provider/src or emulator/src is
// longer than MAX_LINES, from its first line to its closing brace. A longer
// one is split where it reads better, which is nearly always.
const MAX_LINES = 50;

interface FunctionLength {
  /** `provider/src/fleet/runner.ts:72 runFleet` */
  where: string;
  lines: number;
}

function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return "(anonymous)";
}

/** Every function of a module with a body: declarations, methods, arrows, expressions, accessors, constructors. */
function functionLengths(file: string, text = readFileSync(file, "utf8")): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const line = (position: number) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const where = `${relative(projectRoot, file)}:${line(node.getStart(source)) + 1} ${nameOf(node, source)}`;
      found.push({ where, lines: line(node.end) - line(node.getStart(source)) + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("functions in provider/src and emulator/src", () => {
  const functions = ["provider/src", "emulator/src"].flatMap((folder) =>
    typeScriptFiles(join(projectRoot, folder)).flatMap((file) => functionLengths(file)),
  );

  it(`are at most ${MAX_LINES} lines long`, () => {
    const offenders = functions
      .filter((found) => found.lines > MAX_LINES)
      .map((found) => `${found.where} has ${found.lines} lines`);
    expect(offenders).toEqual([]);
  });

  it("are measured from their first line to their closing brace, nested ones too", () => {
    const body = Array.from({ length: 58 }, (_, index) => `  const line${index} = ${index};`).join("\n");
    const text = `export function long(): void {\n${body}\n  const inner = () => {\n    return 1;\n  };\n}\n`;
    const measured = functionLengths(join(projectRoot, "provider/src/example.ts"), text);
    expect(measured).toEqual([
      { where: "provider/src/example.ts:1 long", lines: 63 },
      { where: "provider/src/example.ts:60 inner", lines: 3 },
    ]);
  });
});
