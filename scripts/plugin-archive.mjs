// The provider plugin as Pulumi installs plugins: an archive holding
// `pulumi-resource-dmarc` at its root, for
//   pulumi plugin install resource dmarc <version> --file <archive>
// The plugin is the package's own code (dist/plugin/main.js) run by the
// node on PATH, so the archive holds the package installed from its `npm
// pack` tarball with its dependencies and the pinned @pulumi/pulumi; it
// needs no Go and no npm on the machine that installs it. It is
// platform-neutral JavaScript: one archive serves Linux and macOS.
//
// `npm run plugin [-- <folder>]` writes it into .cache/plugin/ (or
// <folder>) and prints its path. Dependency-free: run after `npm ci`.

import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { pinnedPulumiVersion, projectRoot } from "./engine.mjs";

const providerDir = join(projectRoot, "provider");

/** The launcher at the archive's root: the same plugin as provider/bin's, from the installed package. */
const launcher = `#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
exec node "$here/node_modules/pulumi-dmarc-partner/dist/plugin/main.js" "$@"
`;

function npm(args, cwd) {
  return execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The package's version: the plugin's, as `pulumi plugin install` names it. */
export function pluginVersion() {
  return JSON.parse(readFileSync(join(providerDir, "package.json"), "utf8")).version;
}

/** Builds the archive into `folder` (created if missing) from the built provider; answers its path. */
export function buildPluginArchive(folder = join(projectRoot, ".cache", "plugin")) {
  const version = pluginVersion();
  const work = mkdtempSync(join(tmpdir(), "dmarc-plugin-"));
  try {
    const [packed] = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", work], providerDir));
    const staging = join(work, "plugin");
    mkdirSync(staging);
    writeFileSync(join(staging, "package.json"), JSON.stringify({ name: "pulumi-resource-dmarc", private: true }));
    npm(
      [
        "install",
        "--omit=dev",
        "--no-audit",
        "--no-fund",
        "--no-package-lock",
        join(work, packed.filename),
        `@pulumi/pulumi@${pinnedPulumiVersion()}`,
      ],
      staging,
    );
    // Pulumi's installer takes regular files and folders only: npm's command links go.
    execFileSync("find", [staging, "-type", "l", "-delete"]);
    writeFileSync(join(staging, "pulumi-resource-dmarc"), launcher);
    chmodSync(join(staging, "pulumi-resource-dmarc"), 0o755);
    mkdirSync(folder, { recursive: true });
    const archive = resolve(folder, `pulumi-resource-dmarc-v${version}.tar.gz`);
    execFileSync("tar", ["-czf", archive, "-C", staging, "."]);
    return archive;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const archive = buildPluginArchive(process.argv[2]);
  process.stdout.write(
    `${archive}\ninstall it with: pulumi plugin install resource dmarc ${pluginVersion()} --file ${archive}\n`,
  );
}
