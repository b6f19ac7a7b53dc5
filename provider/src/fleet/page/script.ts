import { readFileSync } from "node:fs";
import { join } from "node:path";

// The fleet page's script as one inline module. Its TypeScript is in
// browser/, a project of its own (DOM types, no Node ones) that `tsc -b`
// emits into dist/fleet/page/browser/: the drawing module (pageScript.js)
// and the logic it imports (pageLogic.js). A page may load nothing, so the
// two become one module here: the logic's text first, then the drawing's
// without its import of it, whose names are then the module's own. Read
// when a page is written, from the built package, rather than copied into a
// module checked in: `tsc -b` stays the one build, and no copy can go
// stale. dist/ holds the emitted modules whether this file runs from
// dist/fleet/page or, in the tests, from src/fleet/page.

const EMITTED = join(__dirname, "..", "..", "..", "dist", "fleet", "page", "browser");

/** The drawing module's one import: what it uses of the logic module. */
const LOGIC_IMPORT = /^import \{[^}]*\} from "\.\/pageLogic";\n/m;

export function pageScript(): string {
  const read = (name: string) => readFileSync(join(EMITTED, `${name}.js`), "utf8");
  const drawing = read("pageScript");
  if (!LOGIC_IMPORT.test(drawing)) throw new Error(`${join(EMITTED, "pageScript.js")} does not import ./pageLogic`);
  return `${read("pageLogic")}${drawing.replace(LOGIC_IMPORT, "")}`;
}
