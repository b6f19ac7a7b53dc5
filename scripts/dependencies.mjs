// The module rules of .dependency-cruiser.cjs, checked and drawn: the
// violations (test/dependencies.test.ts expects none) and CONTRIBUTING's
// picture of provider/src, one box a folder, drawn from the same cruise.
// `npm run graph` writes the picture into CONTRIBUTING.md.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cruise, format } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { isMain, projectRoot } from "./project.mjs";

const CONTRIBUTING = join(projectRoot, "CONTRIBUTING.md");
const START = "<!-- module graph: npm run graph -->";
const END = "<!-- end of module graph -->";

const EDGE = /^\S+-->\S+$/;

/**
 * The picture with its arrows, which close it, in one order: the cruise
 * gives them in the order it met the modules, which follows the order the
 * file system lists a folder in, and differs from one checkout to another.
 */
function sortedEdges(mermaid) {
  const lines = mermaid.split("\n");
  return [...lines.filter((line) => !EDGE.test(line)), ...lines.filter((line) => EDGE.test(line)).sort()].join("\n");
}

/**
 * Cruises provider/src, emulator/src, scripts/, test/support and bench/src from the project root: the rules' violations and the folder picture.
 * @returns {Promise<{ violations: string[], graph: string }>}
 */
export async function cruiseProject() {
  const previous = process.cwd();
  process.chdir(projectRoot);
  try {
    const options = await extractDepcruiseOptions("./.dependency-cruiser.cjs");
    const tsConfig = extractTSConfig("tsconfig.base.json");
    const { output } = /** @type {{ output: import("dependency-cruiser").ICruiseResult }} */ (
      await cruise(["provider/src", "emulator/src", "scripts", "test/support", "bench/src"], options, {}, { tsConfig })
    );
    const picture = await format(output, {
      outputType: "mermaid",
      includeOnly: "^provider/src",
      // The layers' table beside the modules is the rule's, not a module of the package.
      exclude: "^provider/src/layers\\.cjs$",
      collapse: "^provider/src/[^/]+",
    });
    const violations = output.summary.violations.map(
      (violation) =>
        `${violation.rule.name}: ${violation.from}${violation.to === violation.from ? "" : ` → ${violation.to}`}${violation.cycle ? ` (circle: ${violation.cycle.map((step) => step.name ?? step).join(" → ")})` : ""}`,
    );
    return { violations, graph: `\`\`\`mermaid\n${sortedEdges(String(picture.output).trim())}\n\`\`\`` };
  } finally {
    process.chdir(previous);
  }
}

/**
 * The picture CONTRIBUTING.md holds now.
 * @returns {string}
 */
export function contributingGraph() {
  const text = readFileSync(CONTRIBUTING, "utf8");
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start === -1 || end < start) throw new Error(`CONTRIBUTING.md has no "${START}" ... "${END}" block`);
  return text.slice(start + START.length, end).trim();
}

if (isMain(import.meta.url)) {
  const { violations, graph } = await cruiseProject();
  const text = readFileSync(CONTRIBUTING, "utf8");
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  writeFileSync(CONTRIBUTING, `${text.slice(0, start + START.length)}\n${graph}\n${text.slice(end)}`);
  process.stdout.write(`CONTRIBUTING.md's module graph written; ${violations.length} rule violation(s)\n`);
  for (const violation of violations) process.stdout.write(`  ${violation}\n`);
}
