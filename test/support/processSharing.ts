import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

// Which test files share a process with the files before them in their
// vitest worker (vitest's `isolate: false`) and which get a process of their
// own. A fresh process loads a file's modules again (vitest's runner, zod,
// fastify, the provider's client...): about a second of CPU a file, on a
// suite bound by its CPU. A file may share when neither it nor a helper it
// imports (its relative imports, followed; the provider's own sources are
// what the tests are of, and are not) changes what a later file would see
// or starts the engine in the test's process.

/** What a file does that a later file in the same process would inherit. */
const CHANGES_WHAT_IS_GLOBAL =
  /\.setMocks\(|\bvi\.mock\(|\bvi\.useFakeTimers\(|\bvi\.stub(Env|Global)\(|process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|delete process\.env|process\.chdir\(/;

/** The Automation API: the engine run from the test's own process, with @pulumi/pulumi's state in it. */
const RUNS_THE_ENGINE_HERE = /from "@pulumi\/pulumi\/automation"/;

const RELATIVE_IMPORT = /(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"|import\("(\.[^"]+)"\)/g;

/** The file a relative import names, as TypeScript and Node resolve it here; undefined for the provider's sources. */
function importedFile(root: string, from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.m?js$/, ".ts"), `${base}.ts`, join(base, "index.ts")];
  const file = candidates.find((candidate) => /\.(m?ts|m?js)$/.test(candidate) && existsSync(candidate));
  return file && !relative(root, file).startsWith(`provider${sep}`) ? file : undefined;
}

/** Why `name` (relative to `root`) needs a process of its own, from it and every helper it imports; empty when it may share. */
export function ownProcessReasons(root: string, name: string, visited = new Set<string>()): string[] {
  const file = resolve(root, name);
  if (visited.has(file)) return [];
  visited.add(file);
  const source = readFileSync(file, "utf8");
  const reasons = [
    ...(CHANGES_WHAT_IS_GLOBAL.test(source) ? [`${name} changes what is global`] : []),
    ...(RUNS_THE_ENGINE_HERE.test(source) ? [`${name} runs the engine in the test's process`] : []),
  ];
  for (const [, specifier, dynamic] of source.matchAll(RELATIVE_IMPORT)) {
    const imported = importedFile(root, file, (specifier ?? dynamic) as string);
    if (imported) reasons.push(...ownProcessReasons(root, relative(root, imported), visited));
  }
  return reasons;
}

/** The test files under `folders` (relative to `root`) that may share a process, as paths relative to `root`. */
export function processSharingFiles(root: string, folders: string[]): string[] {
  return folders
    .flatMap((folder) =>
      readdirSync(join(root, folder), { recursive: true, encoding: "utf8" }).map((name) => join(folder, name)),
    )
    .filter((name) => name.endsWith(".test.ts") && !name.split(/[\\/]/).includes("node_modules"))
    .filter((name) => ownProcessReasons(root, name).length === 0)
    .sort();
}
