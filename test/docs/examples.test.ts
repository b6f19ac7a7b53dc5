import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { resourceDefinitions } from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { invokeDefinitions } from "../../provider/src/plugin/invokes";
import { runProcess } from "../../scripts/build/process.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { referencePages } from "../../scripts/reference/index.mjs";
import { EXAMPLE_LANGUAGES, exampleIn, INDEX_EXAMPLE } from "../../scripts/sdk/examples.mjs";
import type { ExampleLanguage } from "../../scripts/sdk/generators.mjs";
import { generateSdks } from "../../scripts/sdk/index.mjs";
import { compileNodejsSdk, GO_MODULE_FOLDER } from "../../scripts/sdk/packages.mjs";
import { ensureSchema } from "../../scripts/sdk/schema.mjs";
import { ensurePythonEnvironment } from "../../scripts/toolchains/python.mjs";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { type PluginProject, pluginProject } from "../support/pluginProject";
import { writeGoModuleOnSdk } from "../support/sdkTools";

// The examples, as Pulumi's program generators write them from their PCL
// (scripts/sdk/examples/) into the schema's descriptions, and as the
// reference pages and the Registry's index page (docs/_index.md) show them,
// checked in their languages: the TypeScript ones type-check against the
// generated Node.js SDK, the Python ones run on Pulumi's mocks on the
// generated Python SDK, the Go ones are type-checked by `go vet` against the
// Go SDK checked in at sdk/go/dmarc, all of a language in one run; the YAML
// ones run against one emulator through the provider plugin, all in one
// program in one stack. C#: this machine has no .NET, so no C# example is
// compiled here; each is bound against the schema by .NET's program
// generator that writes it, and every class and member it names is found in
// the C# SDK generated from the same schema. test/docs/reference.test.ts
// fails while a page shows another text than its example makes now.

const TOOL_TIMEOUT = 900_000;

/** The TSIG key the examples publish with: the name they give, the secret their stack's configuration. */
const zoneKey = { name: "dmarc-update", algorithm: "hmac-sha256" as const, secret: randomBytes(32).toString("base64") };

const pages = await referencePages();
const schema = JSON.parse((await ensureSchema(undefined)).text);

/** A page's examples as a reader copies them: the code block under each language's heading (or its chooser's tab). */
function examplesOn(text: string): Partial<Record<ExampleLanguage, string>> {
  const usage = text.slice(Math.max(0, text.indexOf("\n## Example usage\n")));
  const blocks = EXAMPLE_LANGUAGES.map(({ language, heading, fence }) => {
    const block = new RegExp(
      `\n(?:### ${heading}|\\{\\{% choosable language ${fence} %\\}\\})\n\n\`\`\`${fence}\n([^]*?)\n\`\`\`\n`,
    ).exec(usage);
    return [language, block?.[1]];
  });
  return Object.fromEntries(blocks.filter(([, block]) => block !== undefined));
}

/** Each page's examples, by the page's name (`_index` for the Registry's index page), by generator language. */
const examples: Record<string, Partial<Record<ExampleLanguage, string>>> = Object.fromEntries(
  pages
    .filter((page) => page.text.includes("\n## Example usage\n") || page.path === "docs/_index.md")
    .map((page) => [basename(page.path, ".md"), examplesOn(page.text)]),
);
const names = Object.keys(examples);
const schemaMembers = { ...schema.resources, ...schema.functions } as Record<string, { description: string }>;

/** The text of every file of `folder` ending in `extension`, together. */
function sourcesOf(folder: string, extension: string): string {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), "utf8"))
    .join("\n");
}

/** Each table of a page's sections "In each language" and "Names in each language", its rows by its header's names. */
function languageTables(text: string): Record<string, string>[][] {
  const sections = text.split(/^#{2,3} /m).filter((section) => /^(Names )?[Ii]n each language\n/.test(section));
  return sections.flatMap((section) =>
    section
      .split(/\n\n/)
      .filter((block) => block.startsWith("|"))
      .map((block) => {
        const [header = [], , ...rows] = block.split("\n").map((line) =>
          line
            .replace(/^\||\|$/g, "")
            .split(/(?<!\\)\|/)
            .map((cell) => cell.trim()),
        );
        return rows.map((row) => Object.fromEntries(header.map((name, column) => [name, row[column] ?? ""])));
      }),
  );
}

describe("the reference pages' examples", () => {
  let work: string;
  let sdks: Record<string, string>;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "dmarc-examples-"));
    sdks = (await generateSdks(join(work, "sdk"), ["nodejs", "python", "dotnet"])) as Record<string, string>;
  }, TOOL_TIMEOUT);

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it("are on every resource type's, the Tenant's and every function's page and the Registry's index page, in TypeScript, Python, Go, C# and YAML", () => {
    expect(names.sort()).toEqual(
      [...Object.keys(resourceDefinitions), "tenant", ...Object.keys(invokeDefinitions), INDEX_EXAMPLE].sort(),
    );
    for (const name of names)
      expect(Object.keys(examples[name] ?? {}), name).toEqual(EXAMPLE_LANGUAGES.map(({ language }) => language));
  });

  it("are in the schema the executable serves, in five languages for every resource and function, and each page shows its member's text", () => {
    const members = Object.entries(schemaMembers);
    expect(members.length).toBe(names.length - 1);
    for (const [token, member] of members) {
      const example = exampleIn(member.description);
      expect(Object.keys(example?.sources ?? {}), token).toEqual(EXAMPLE_LANGUAGES.map(({ language }) => language));
      const name = token.slice(token.lastIndexOf(":") + 1);
      expect(examples[name.charAt(0).toLowerCase() + name.slice(1)], token).toEqual(example?.sources);
    }
  });

  it("name each property as its language does: a Domain's domain is DomainName in C#, where a member may not be named as its class", () => {
    const organization = examples.organization;
    expect(organization?.nodejs).toMatch(/new dmarc\.Organization\("acme", \{ ?name: "Acme Corp" ?\}\)/);
    expect(organization?.python).toContain('dmarc.Organization("acme", name="Acme Corp")');
    expect(organization?.go).toContain('Name: pulumi.String("Acme Corp")');
    expect(organization?.dotnet).toContain('Name = "Acme Corp"');
    expect(organization?.yaml).toContain("type: dmarc:Organization");
    expect(examples.domain?.dotnet).toContain('DomainName = "acme.example"');
    expect(examples.domain?.python).toContain('domain="acme.example"');
    expect(examples.domain?.go).toContain('Domain:         pulumi.String("acme.example")');
  });

  it(
    "TypeScript: type-check against the SDK generated from the plugin's schema",
    async () => {
      const sdk = sdks.nodejs as string;
      await compileNodejsSdk(sdk);
      const project = join(work, "typescript");
      mkdirSync(join(project, "node_modules", "@dmarc-partner"), { recursive: true });
      symlinkSync(sdk, join(project, "node_modules", "@dmarc-partner", "pulumi-dmarc"), "dir");
      symlinkSync(join(projectRoot, "node_modules", "@pulumi"), join(project, "node_modules", "@pulumi"), "dir");
      for (const name of names) writeFileSync(join(project, `${name}.ts`), examples[name]?.nodejs ?? "");
      const compilerOptions = {
        strict: true,
        noEmit: true,
        module: "commonjs",
        target: "ES2022",
        skipLibCheck: true,
        types: [],
      };
      writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["*.ts"] }));
      await runProcess(join(projectRoot, "node_modules", ".bin", "tsc"), ["-p", project], { cwd: project });
    },
    TOOL_TIMEOUT,
  );

  it(
    "Python: run on Pulumi's mocks, on the SDK generated from the plugin's schema",
    async () => {
      const python = await ensurePythonEnvironment();
      // Installed into a folder of the test's own, not the shared environment: the SDK's version comes from its metadata.
      const site = join(work, "python-site");
      const pip = ["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--no-index"];
      await runProcess(python, [...pip, "--no-build-isolation", "--no-deps", "--target", site, sdks.python as string], {
        cwd: work,
      });
      const programs = names.map((name) => {
        const program = join(work, "python", `${name}.py`);
        mkdirSync(dirname(program), { recursive: true });
        writeFileSync(program, examples[name]?.python ?? "");
        return program;
      });
      const runner = join(projectRoot, "test", "fixtures", "docs", "examples_on_mocks.py");
      const output = await runProcess(python, [runner, ...programs], {
        cwd: work,
        env: { PYTHONPATH: site, PYTHONDONTWRITEBYTECODE: "1" },
      });
      expect(output.trim().split("\n")).toEqual(programs.map((program) => `ran ${program}`));
    },
    TOOL_TIMEOUT,
  );

  it("C#: every class and member each example names is one the C# SDK generated from the schema declares (no .NET here to compile them)", () => {
    const folder = sdks.dotnet as string;
    const sources = readdirSync(folder, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".cs"))
      .map((entry) => readFileSync(join(entry.parentPath, entry.name), "utf8"))
      .join("\n");
    const declared = new Set(
      [
        ...sources.matchAll(
          /\b(?:class|enum|struct) (\w+)|public [\w<>.?, ]+ (\w+)(?= \{| =>|;|\()|namespace [\w.]*\.(\w+)/g,
        ),
      ].map((match) => match[1] ?? match[2] ?? match[3]),
    );
    const named = names.flatMap((name) => {
      const source = examples[name]?.dotnet ?? "";
      const types = [...source.matchAll(/\bDmarc\.(\w+)(?:\.(\w+))?/g)].flatMap(([, type, member]) =>
        member ? [type, member] : [type],
      );
      const initialized = [...source.matchAll(/^\s+(\w+) = /gm)].map(([, member]) => member);
      return [...types, ...initialized].map((member) => ({ name, member }));
    });
    expect(named.length).toBeGreaterThan(names.length * 2);
    expect(named.filter(({ member }) => !declared.has(member as string))).toEqual([]);
  });

  it("are in the doc comments of each SDK generated from the schema, each its own language's", () => {
    // Comment markers, indentation and XML escapes aside, as each generator lays out a comment.
    const bare = (text: string) =>
      text
        .replaceAll("&gt;", ">")
        .replaceAll("&lt;", "<")
        .replaceAll("&quot;", '"')
        .replaceAll("&amp;", "&")
        .replace(/[\s*/#]/g, "");
    const sdkSources: [ExampleLanguage, string][] = [
      ["nodejs", bare(sourcesOf(sdks.nodejs as string, ".ts"))],
      ["python", bare(sourcesOf(sdks.python as string, ".py"))],
      ["go", bare(sourcesOf(GO_MODULE_FOLDER, ".go"))],
      ["dotnet", bare(sourcesOf(sdks.dotnet as string, ".cs"))],
    ];
    const missing = Object.entries(schemaMembers).flatMap(([token, member]) => {
      const example = exampleIn(member.description);
      return sdkSources
        .filter(([language, sources]) => !sources.includes(bare(example?.sources[language] ?? "-")))
        .map(([language]) => `${token} in ${language}`);
    });
    expect(missing).toEqual([]);
  });

  it("name every class, function, field and enumeration constant as the SDK of its language declares it", () => {
    const sdkSources: Record<string, string> = {
      TypeScript: sourcesOf(sdks.nodejs as string, ".ts"),
      Python: sourcesOf(sdks.python as string, ".py"),
      Go: sourcesOf(GO_MODULE_FOLDER, ".go"),
      "C#": sourcesOf(sdks.dotnet as string, ".cs"),
    };
    const named = pages.flatMap((page) =>
      languageTables(page.text).flatMap((rows) =>
        rows.flatMap((row) => {
          // The first table has a row per language; the others a column per language.
          const cells: [string, string][] = row.Language
            ? [[row.Language, row.Resource ?? row.Function ?? ""]]
            : Object.entries(row);
          return cells
            .filter(([language]) => language in sdkSources)
            .map(([language, cell]) => ({ page: page.path, language, name: /`[^`]*?(\w+)`$/.exec(cell)?.[1] ?? cell }));
        }),
      ),
    );
    expect(named.length).toBeGreaterThan(200);
    const missing = named.filter(({ language, name }) => !new RegExp(`\\b${name}\\b`).test(sdkSources[language] ?? ""));
    expect(missing).toEqual([]);
  });

  it(
    "Go: type-check (go vet) against the module checked in at sdk/go/dmarc",
    async () => {
      const project = join(work, "go");
      for (const name of names) {
        mkdirSync(join(project, name), { recursive: true });
        writeFileSync(join(project, name, "main.go"), examples[name]?.go ?? "");
      }
      writeGoModuleOnSdk(project, "dmarc-examples");
      const env = { GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod" };
      await runProcess("go", ["mod", "tidy"], { cwd: project, env });
      // The compiler's type check, and vet's checks, of every program from Go's cache of the SDK's export data:
      // building each (compiled and linked again on every run) found nothing more, at 40 s of CPU.
      await runProcess("go", ["vet", "./..."], { cwd: project, env });
    },
    TOOL_TIMEOUT,
  );
});

/** The sections of a Pulumi YAML program whose keys the program's `${...}` expressions name. */
const NAMED_SECTIONS = ["configuration", "variables", "resources"] as const;

type YamlProgram = Partial<Record<(typeof NAMED_SECTIONS)[number] | "outputs", Record<string, unknown>>>;

const yamlPrograms: Record<string, YamlProgram> = Object.fromEntries(
  names.map((name) => [name, parse(examples[name]?.yaml ?? "") as YamlProgram]),
);

/** The names an example's expressions refer to that the example itself does not declare. */
function undeclaredNames(program: YamlProgram): string[] {
  const declared = new Set(NAMED_SECTIONS.flatMap((section) => Object.keys(program[section] ?? {})));
  const referred = [...JSON.stringify(program).matchAll(/\$\{([A-Za-z][\w-]*)/g)].map(
    ([, referent]) => referent as string,
  );
  return [...new Set(referred)].filter((referent) => !declared.has(referent));
}

/**
 * All examples as one program, so the engine runs once for all of them: a
 * name two examples declare must be declared alike (they tell one story: Acme
 * Corp, its Production group, acme.example), and each output is kept under
 * its example's name.
 */
function oneProgram(programs: Record<string, YamlProgram>): YamlProgram {
  const merged = { configuration: {}, variables: {}, resources: {}, outputs: {} } satisfies YamlProgram;
  for (const [name, program] of Object.entries(programs)) {
    for (const section of NAMED_SECTIONS) {
      const into: Record<string, unknown> = merged[section];
      for (const [key, declaration] of Object.entries(program[section] ?? {})) {
        if (key in into && JSON.stringify(into[key]) !== JSON.stringify(declaration))
          throw new Error(`the ${name} example declares ${section}.${key} unlike an example before it`);
        into[key] = declaration;
      }
    }
    for (const [output, value] of Object.entries(program.outputs ?? {}))
      (merged.outputs as Record<string, unknown>)[`${name}_${output}`] = value;
  }
  return merged;
}

describe("the reference pages' YAML examples", () => {
  let emulator: EmulatorHandle;
  let project: PluginProject;
  let outputs: Record<string, unknown>;

  beforeAll(async () => {
    emulator = await startTestEmulator({ dns: { port: 0, checkIntervalMs: 250, tsigKey: zoneKey } });
    project = await pluginProject("dmarc-examples", {
      ...emulator.stackConfig,
      "dmarc-examples:dnsServer": { value: emulator.emulator.dnsServer ?? "" },
      "dmarc-examples:dnsKeySecret": { value: zoneKey.secret, secret: true },
    });
    project.write(oneProgram(yamlPrograms));
    await project.ok(["up", "--yes", "--skip-preview"]);
    outputs = await project.outputs();
  }, TOOL_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await emulator?.emulator.close();
  }, TOOL_TIMEOUT);

  it.each(names)(
    "%s: declares every name it refers to, and runs against the emulator through the provider plugin",
    (name) => {
      const program = yamlPrograms[name] ?? {};
      expect(undeclaredNames(program)).toEqual([]);
      expect(Object.keys(program.resources ?? {}).length + Object.keys(program.variables ?? {}).length).toBeGreaterThan(
        0,
      );
      for (const output of Object.keys(program.outputs ?? {})) {
        expect(outputs, `${name}: ${output}`).toHaveProperty(`${name}_${output}`);
        expect(outputs[`${name}_${output}`], `${name}: ${output}`).not.toBe("");
      }
    },
  );

  it(
    "are destroyed leaving nothing",
    async () => {
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      expect(await partnerClient(emulator).listOrganizations()).toEqual([]);
    },
    TOOL_TIMEOUT,
  );
});
