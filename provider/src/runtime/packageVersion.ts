import { readFileSync } from "node:fs";
import { join } from "node:path";

/** This package's version, from its manifest beside dist/: what the fleet's digest and the plugin report. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as { version: string };
  return manifest.version;
}
