import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every TypeScript file below `folder`, for the tests that read the sources (layers, function lengths). */
export function typeScriptFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? typeScriptFiles(join(folder, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(folder, entry.name)]
        : [],
  );
}
