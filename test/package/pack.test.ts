import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";

// What `npm pack` of provider/ would publish: the compiled code and its type
// declarations, the README for the npm page, the licence and the manifest.
// No sources, tests, source maps (they would point at sources not shipped)
// or build info.

const providerDir = join(projectRoot, "provider");
const manifest = JSON.parse(readFileSync(join(providerDir, "package.json"), "utf8"));

interface PackResult {
  name: string;
  version: string;
  files: { path: string }[];
}

function packedFiles(): string[] {
  const output = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: providerDir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [result] = JSON.parse(output) as PackResult[];
  if (!result) throw new Error(`npm pack --dry-run --json printed no package:\n${output}`);
  expect(result.name).toBe("pulumi-dmarc-partner");
  return result.files.map((file) => file.path).sort();
}

describe("the published package", () => {
  const files = packedFiles();

  it("holds the compiled code, its declarations, its commands, the plugin's launcher, README, LICENSE and package.json, and nothing else", () => {
    // The launcher is no npm command: a project's `plugins.providers` names its folder, the engine runs it.
    const commands = [...Object.values((manifest.bin ?? {}) as Record<string, string>), "bin/pulumi-resource-dmarc"];
    const unexpected = files.filter(
      (path) =>
        !["package.json", "README.md", "LICENSE", ...commands].includes(path) && !/^dist\/.+\.(js|d\.ts)$/.test(path),
    );
    expect(commands.length).toBeGreaterThan(0);
    expect(unexpected).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(commands));
    expect(files).toEqual(expect.arrayContaining(["package.json", "README.md", "LICENSE"]));
  });

  it("holds every entry point the manifest names, with its declarations", () => {
    const targets = [manifest.main, manifest.types, ...Object.values(manifest.exports as Record<string, string>)];
    // A wildcard target (the serialized providers' entry points) stands for every file it matches.
    const paths = targets.flatMap((target: string) => {
      const path = target.replace(/^\.\//, "");
      if (!path.includes("*")) return [path];
      const pattern = new RegExp(
        `^${path
          .split("*")
          .map((part) => part.replace(/[.]/g, "\\."))
          .join("[^/]+")}$`,
      );
      const matched = files.filter((file) => pattern.test(file));
      expect(matched.length, path).toBeGreaterThan(0);
      return matched;
    });
    const expected = paths.flatMap((path) =>
      path.endsWith(".d.ts") ? [path] : [path, path.replace(/\.js$/, ".d.ts")],
    );
    expect(expected.length).toBeGreaterThan(4);
    expect(files).toEqual(expect.arrayContaining(expected));
  });

  it("has a serialized provider entry point for every resource type", () => {
    const typeNames = [
      "Organization",
      "DomainGroup",
      "Domain",
      "DomainVerification",
      "Webhook",
      "Subscription",
      "Invitation",
    ];
    const modules = typeNames.map((name) => `dist/providers/${name.charAt(0).toLowerCase()}${name.slice(1)}.js`);
    expect(files).toEqual(expect.arrayContaining(modules));
  });

  it("leaves out sources, tests, source maps and build info", () => {
    const leaked = files.filter((path) => /(^|\/)(src|test)\/|\.test\.|\.map$|\.tsbuildinfo$|(?<!\.d)\.ts$/.test(path));
    expect(files.length).toBeGreaterThan(3);
    expect(leaked).toEqual([]);
  });

  it("takes @pulumi/pulumi from the partner's project as a peer, from 3.139 within major version 3", () => {
    expect(manifest.dependencies?.["@pulumi/pulumi"]).toBeUndefined();
    expect(manifest.peerDependencies?.["@pulumi/pulumi"]).toBe("^3.139.0");
  });

  it("states the supported Node.js lines, 20, 22 and 24", () => {
    expect(manifest.engines?.node).toBe("^20.18.1 || ^22.0.0 || ^24.0.0");
  });
});
