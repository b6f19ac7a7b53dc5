import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PLATFORMS, RELEASE_NODE_LINE } from "../../scripts/plugin/platforms.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { GO_MODULE_FOLDER } from "../../scripts/sdk/packages.mjs";
import { ensureLinters, lintWorkflows } from "../../scripts/toolchains/actionlint.mjs";

// The GitHub Actions workflows, every one checked by actionlint with
// ShellCheck (installed by scripts/toolchains/actionlint.mjs) and its actions pinned by
// commit, and the release's promises: every platform of the plugin on its own
// runner, the Go module's tag where Go looks for it.

const BUILD_TIMEOUT = 600_000;
const workflowsFolder = join(projectRoot, ".github", "workflows");
const workflowFiles = readdirSync(workflowsFolder)
  .filter((name) => /\.ya?ml$/.test(name))
  .map((name) => join(workflowsFolder, name));
const releaseText = readFileSync(join(workflowsFolder, "release.yml"), "utf8");

interface Step {
  uses?: string;
  run?: string;
}
interface Job {
  env?: Record<string, string>;
  needs?: string[];
  steps: Step[];
  strategy?: {
    matrix: { include?: { platform: string; runner: string }[]; runner?: string[]; language?: string[] };
  };
}
interface Workflow {
  on: { push: { tags: string[] } };
  env?: Record<string, string>;
  jobs: Record<string, Job>;
}
const release = parse(releaseText) as Workflow;
const workflows = workflowFiles.map((file) => parse(readFileSync(file, "utf8")) as Workflow);

describe("the GitHub Actions workflows", () => {
  let work: string;

  beforeAll(async () => {
    await ensureLinters();
    work = mkdtempSync(join(tmpdir(), "dmarc-workflows-"));
  }, BUILD_TIMEOUT);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("lint clean, every one of them", async () => {
    expect(workflowFiles.length).toBeGreaterThan(1);
    expect(await lintWorkflows(workflowFiles)).toEqual({ ok: true, findings: "" });
  });

  it("a broken copy of the release fails the lint, naming each mistake", async () => {
    const broken = releaseText
      .replace("needs: [version, plugin, sdks]", "needs: [version, plugins, sdks]")
      .replace(
        "needs.version.outputs.version }}-${{ matrix.platform",
        "needs.version.outputs.versoin }}-${{ matrix.platform",
      )
      .replace('echo "version=$version" >> "$GITHUB_OUTPUT"', 'echo "version=$version" >> $GITHUB_OUTPUT');
    for (const mistake of ["plugins, sdks", "versoin", ">> $GITHUB_OUTPUT"]) expect(broken).toContain(mistake);
    const folder = join(work, ".github", "workflows");
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "release.yml"), broken);
    const { ok, findings } = await lintWorkflows([join(folder, "release.yml")]);
    expect(ok).toBe(false);
    expect(findings).toContain('job "release" needs job "plugins" which does not exist in this workflow');
    expect(findings).toContain('property "versoin" is not defined');
    expect(findings).toMatch(
      /shellcheck reported issue in this script: SC2086:info:\d+:\d+: Double quote to prevent globbing/,
    );
  });

  it("the release runs on a version tag and builds the plugin for each platform on its own runner, on the Node.js line every build carries", () => {
    expect(release.on.push.tags).toEqual(["v*"]);
    expect(release.env?.NODE_VERSION).toBe(String(RELEASE_NODE_LINE));
    const platforms = release.jobs.plugin?.strategy?.matrix.include ?? [];
    expect(Object.fromEntries(platforms.map(({ platform, runner }) => [platform, runner]))).toEqual(
      Object.fromEntries(Object.entries(PLATFORMS).map(([platform, { runner }]) => [platform, runner])),
    );
    expect(Object.keys(PLATFORMS)).toContain("windows-arm64");
  });

  it("pins every action of every workflow by its commit", () => {
    const uses = workflows.flatMap(({ jobs }) =>
      Object.values(jobs).flatMap((job) => job.steps.flatMap((step) => step.uses ?? [])),
    );
    expect(uses.length).toBeGreaterThan(15);
    expect(uses.filter((action) => !/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/.test(action))).toEqual([]);
  });

  it("builds the plugin's executables from the tag's schema, which the SDK job checks, so no plugin runner needs Go", () => {
    const build = release.jobs.plugin?.steps.find((step) => step.run?.includes("scripts/plugin/index.mjs"));
    expect(build?.run).toContain("--schema sdk/schema.json");
    const sdks = release.jobs.sdks?.steps.map((step) => step.run ?? "").join("\n");
    expect(sdks).toContain("git status --porcelain -- sdk");
  });

  it("verifies every published SDK after publishing, installed from its registry, on Linux, macOS and Windows", () => {
    const job = release.jobs["verify-packages"] as Job;
    expect(job.needs).toEqual(["version", "npm", "pypi", "nuget", "go"]);
    expect(job.strategy?.matrix.runner).toEqual(["ubuntu-24.04", "macos-15", "windows-2025"]);
    expect(job.strategy?.matrix.language).toEqual(["nodejs", "python", "go", "dotnet"]);
    const runs = job.steps.map((step) => step.run ?? "").join("\n");
    // The projects test/plugin/packages.test.ts writes on this machine's packages, here on the registries'.
    expect(runs).toMatch(/node scripts\/plugin\/verify-release\.mjs --language "\$\{\{ matrix\.language \}\}"/);
    expect(runs).toContain("pulumi install");
    expect(runs).toContain("pulumi up --yes");
  });

  it("tags the Go module where Go looks for it: its folder in the repository, then its version", () => {
    const modulePath = /^module (\S+)$/m.exec(readFileSync(join(GO_MODULE_FOLDER, "go.mod"), "utf8"))?.[1];
    const goJob = release.jobs.go as Job;
    expect(goJob.env?.MODULE).toBe(modulePath);
    const repository = "github.com/dmarc-partner/pulumi-dmarc/";
    expect(modulePath?.startsWith(repository)).toBe(true);
    const folder = modulePath?.slice(repository.length);
    expect(folder).toBe("sdk/go/dmarc");
    expect(goJob.env?.TAG).toBe(`${folder}/v\${{ needs.version.outputs.version }}`);
  });
});
