import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { runProcess } from "../../scripts/build/process.mjs";
import { pinnedPulumiVersion, projectRoot } from "../../scripts/project.mjs";

// A generated SDK checked by its own language's tools, where this machine
// has them: the SDK generator's test (a hand-written schema) and the
// plugin's (its own schema) run the same steps.

/** A resource class of the generated TypeScript SDK, as a test program loads it from the compiled SDK. */
export interface SdkResource {
  new (
    name: string,
    args: Record<string, unknown>,
    opts?: pulumi.CustomResourceOptions,
  ): pulumi.CustomResource & Record<string, pulumi.Output<unknown>>;
}

/** A generated file's text. */
export const readGenerated = (folder: string, file: string) => readFileSync(join(folder, file), "utf8");

/** Builds a Go SDK against the engine's sdk/v3, fetched through the module proxy. */
export async function buildGoSdk(folder: string): Promise<void> {
  const env = { GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod" };
  await runProcess("go", ["get", `github.com/pulumi/pulumi/sdk/v3@v${pinnedPulumiVersion()}`], { cwd: folder, env });
  await runProcess("go", ["build", "./..."], { cwd: folder, env });
}

/** The Go SDK's module path, as its tag publishes it from sdk/go/dmarc (test/plugin/packages.test.ts holds it current). */
const GO_SDK_MODULE = "github.com/dmarc-partner/pulumi-dmarc/sdk/go/dmarc";

/**
 * Writes the go.mod of programs named `module` in `folder`, on the Go SDK checked in at sdk/go/dmarc (as a
 * partner's programs are on the published module) and the engine's sdk/v3.
 */
export function writeGoModuleOnSdk(folder: string, module: string): void {
  const sdkFolder = join(projectRoot, "sdk", "go", "dmarc");
  writeFileSync(
    join(folder, "go.mod"),
    [
      `module ${module}`,
      "",
      "go 1.25",
      "",
      `require ${GO_SDK_MODULE} v0.0.0`,
      `require github.com/pulumi/pulumi/sdk/v3 v${pinnedPulumiVersion()}`,
      `replace ${GO_SDK_MODULE} => ${JSON.stringify(sdkFolder)}`,
      "",
    ].join("\n"),
  );
}

/** Byte-compiles a Python SDK's package; test/plugin/packages.test.ts installs the plugin's wheel, test/plugin/python.test.ts runs programs on it. */
export async function compilePythonSdk(folder: string, packageName: string): Promise<void> {
  await runProcess("python3", ["-m", "compileall", "-q", packageName], { cwd: folder });
}
