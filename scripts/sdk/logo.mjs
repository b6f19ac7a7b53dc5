// The package's logo: provider/logo.svg, its source, drawn as
// provider/logo.png by resvg (@resvg/resvg-js, pinned in package.json),
// LOGO_SIZE pixels square: the image the schema's logoUrl shows on the
// Pulumi Registry (from the release's tag, so it is checked in) and .NET's
// package carries as its icon. `npm run sdk` draws it again;
// test/plugin/schema.test.ts fails while the PNG is not what the SVG draws.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../project.mjs";

const LOGO_SVG = join(projectRoot, "provider", "logo.svg");
export const LOGO_PNG = join(projectRoot, "provider", "logo.png");

/** Pixels a side: at least the Registry's and NuGet's 128, sharp at twice that. */
export const LOGO_SIZE = 256;

/**
 * The PNG the SVG draws, as bytes.
 * @returns {Promise<Buffer>}
 */
export async function drawnLogo() {
  // From node_modules: run after `npm ci`, as the plugin's bundler is.
  const { Resvg } = await import("@resvg/resvg-js");
  const drawing = new Resvg(readFileSync(LOGO_SVG), { fitTo: { mode: "width", value: LOGO_SIZE } });
  return drawing.render().asPng();
}

/** Draws provider/logo.png from its SVG. */
export async function writeLogo() {
  writeFileSync(LOGO_PNG, await drawnLogo());
}
