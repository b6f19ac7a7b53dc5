import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runProcess } from "../../scripts/build/process.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { ensureSdkGenerator } from "../../scripts/sdk/generators.mjs";
import { buildGoSdk, compilePythonSdk, readGenerated } from "../support/sdkTools";

// scripts/sdk/codegen/sdk-gen, built by scripts/sdk/generators.mjs, on a small hand-written
// schema: one resource with a string input and a secret output, an enum, a
// function. Each SDK is then checked by its own language's tools where this
// machine has them: TypeScript against the installed @pulumi/pulumi, Go
// against the engine's sdk/v3 through the module proxy, Python byte-compiled
// (PyPI is out of reach, so not installed); .NET is only generated (no dotnet).
const fixture = join(projectRoot, "test", "fixtures", "sdk-schema");
const schema = join(fixture, "schema.json");
const logo = join(fixture, "logo.png");
const out = mkdtempSync(join(tmpdir(), "dmarc-sdk-gen-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function generate(language: "nodejs" | "python" | "go" | "dotnet"): Promise<string> {
  const folder = join(out, language);
  const generator = await ensureSdkGenerator(language);
  await runProcess(generator, ["-schema", schema, "-language", language, "-out", folder, "-logo", logo], { cwd: out });
  return folder;
}

const read = readGenerated;

describe("SDK generator", () => {
  it("writes a TypeScript SDK that type-checks against the installed @pulumi/pulumi", async () => {
    const sdk = await generate("nodejs");
    expect(read(sdk, "widget.ts")).toContain("export class Widget extends pulumi.CustomResource");
    expect(read(sdk, "widget.ts")).toContain('additionalSecretOutputs: ["apiKey"]');
    expect(read(sdk, "getWidgetTier.ts")).toContain("export function getWidgetTier(");
    expect(read(sdk, "types/enums/index.ts")).toContain('Free: "free"');
    expect(JSON.parse(read(sdk, "package.json"))).toMatchObject({ name: "@acme/pulumi-acme", version: "0.1.0" });

    // Built once: asked again, the stamp says the binary is current.
    const generator = await ensureSdkGenerator("nodejs");
    const builtAt = statSync(generator).mtimeMs;
    expect(await ensureSdkGenerator("python")).toBe(generator);
    expect(statSync(generator).mtimeMs).toBe(builtAt);

    symlinkSync(join(projectRoot, "node_modules"), join(sdk, "node_modules"), "dir");
    await runProcess(join(projectRoot, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json", "--noEmit"], {
      cwd: sdk,
    });
  }, 600_000);

  it("writes a Go SDK that builds against the engine's sdk/v3", async () => {
    const sdk = await generate("go");
    expect(read(sdk, "go.mod")).toContain("module example.com/pulumi-acme/sdk/go");
    expect(read(sdk, "acme/widget.go")).toContain("func NewWidget(");
    expect(read(sdk, "acme/widget.go")).toMatch(/AdditionalSecretOutputs\(\[\]string\{\s*"apiKey",/);
    expect(read(sdk, "acme/getWidgetTier.go")).toContain("func GetWidgetTier(");
    expect(read(sdk, "acme/pulumiEnums.go")).toContain('TierFree = Tier("free")');

    await buildGoSdk(sdk);
  }, 600_000);

  it("writes a Python SDK that byte-compiles", async () => {
    const sdk = await generate("python");
    const widget = read(sdk, "pulumi_acme/widget.py");
    expect(widget).toContain("class Widget(pulumi.CustomResource):");
    expect(widget).toContain('additional_secret_outputs=["apiKey"]');
    expect(read(sdk, "pulumi_acme/get_widget_tier.py")).toContain("def get_widget_tier(");
    expect(read(sdk, "pulumi_acme/_enums.py")).toContain("class Tier(");

    await compilePythonSdk(sdk, "pulumi_acme");
    expect(existsSync(join(sdk, "pulumi_acme", "__pycache__"))).toBe(true);
  }, 600_000);

  it("writes a .NET SDK: its project, the resource, the function, the enum and the icon given", async () => {
    const sdk = await generate("dotnet");
    expect(read(sdk, "AcmeCorp.Acme.csproj")).toContain("<PackageIcon>logo.png</PackageIcon>");
    const widget = read(sdk, "Widget.cs");
    expect(widget).toContain("public partial class Widget : global::Pulumi.CustomResource");
    expect(widget).toMatch(/AdditionalSecretOutputs =\s*\{\s*"apiKey",/);
    expect(read(sdk, "GetWidgetTier.cs")).toContain("public static class GetWidgetTier");
    expect(read(sdk, "Enums.cs")).toContain('public static Tier Free { get; } = new Tier("free");');
    expect(readFileSync(join(sdk, "logo.png"))).toEqual(readFileSync(logo));
  }, 600_000);

  it("names the file and the problem of a schema it cannot bind, and the languages it has", async () => {
    const broken = join(out, "broken.json");
    const spec = JSON.parse(readFileSync(schema, "utf8"));
    spec.resources["acme:index:Widget"].properties.tier = { $ref: "#/types/acme:index:Missing" };
    writeFileSync(broken, JSON.stringify(spec));
    const generator = await ensureSdkGenerator("nodejs");
    const folder = join(out, "broken");
    await expect(
      runProcess(generator, ["-schema", broken, "-language", "nodejs", "-out", folder], { cwd: out }),
    ).rejects.toThrow(
      /broken\.json: #\/resources\/acme:index:Widget\/properties\/tier\/\$ref: type acme:index:Missing not found/,
    );
    await expect(
      runProcess(generator, ["-schema", schema, "-language", "java", "-out", folder], { cwd: out }),
    ).rejects.toThrow('-language "java": this build generates go, nodejs, python');
    await expect(ensureSdkGenerator("java" as "go")).rejects.toThrow(
      'no SDK generator for the language "java": the languages are nodejs, python, go, dotnet',
    );
  }, 600_000);
});
