// The Pulumi CLI, built from its Go module at the pinned version into the
// artefact `pulumi-cli` when no new enough `pulumi` is on PATH.

import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { GO_ENV, go, goBuild, prepareModuleBuild, requireGo } from "../build/go.mjs";
import { ask } from "../build/process.mjs";

const ENGINE_MODULE = "github.com/pulumi/pulumi/pkg/v3";
export const SDK_MODULE = "github.com/pulumi/pulumi/sdk/v3";

/** The linker flag that stamps a Pulumi program of sdk/v3 with its version, as `pulumi version` prints it. */
export const versionFlag = (version) => `-X ${SDK_MODULE}/go/common/version.Version=v${version}`;

// The CLI reads zxcvbn's word lists (two copies: Pulumi's `config set` and ESC's `env set`) on every start,
// to judge whether a plain config value looks like a secret: 90 of 145 ms of CPU for `pulumi version` here, on
// every one of the many CLI starts of a test run. Built from copies of the two modules that read them when a
// value is first judged, the CLI answers `config set` as before (test/engine/smoke.test.ts). Each edit must
// match once; a module whose text has changed is built as it is, with a warning.
const LAZY_WORD_LISTS = [
  [
    "frequency/frequency.go",
    "func init() {",
    "func Load() { loadOnce.Do(load) }\n\nvar loadOnce sync.Once\n\nfunc load() {",
  ],
  ["frequency/frequency.go", "import (\n", 'import (\n\t"sync"\n'],
  ["matching/matching.go", "func init() {\n\tloadFrequencyList()\n}\n", ""],
  ["matching/matching.go", "func loadFrequencyList() {\n", "func loadFrequencyList() {\n\tfrequency.Load()\n"],
];
const LAZY_WORD_LIST_MODULES = ["github.com/nbutton23/zxcvbn-go", "github.com/ccojocar/zxcvbn-go"];

// Copies `module` (as the build list has it) into the build folder with LAZY_WORD_LISTS applied and points the
// build at the copy; leaves the build as it is when the module is not in it or its text has changed.
async function replaceWithLazyCopy(work, module) {
  const listed = ask("go", ["list", "-m", "-json", module], { cwd: work, env: GO_ENV });
  const { Dir: source } = JSON.parse(listed.ok ? listed.stdout : "{}");
  if (!source) return;
  const folder = join("lazy", module.replaceAll("/", "_"));
  const copy = join(work, folder);
  cpSync(source, copy, { recursive: true });
  // Writable, as the module cache's files are not, so that the build folder can be edited and removed.
  for (const name of ["", ...readdirSync(copy, { recursive: true, encoding: "utf8" })]) {
    const path = join(copy, name);
    chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
  }
  for (const [file, from, to] of LAZY_WORD_LISTS) {
    const path = join(copy, file);
    const text = readFileSync(path, "utf8");
    if (text.split(from).length !== 2) {
      process.stderr.write(`[engine] ${module}: ${file} has changed; its word lists stay read on every start\n`);
      return;
    }
    writeFileSync(path, text.replace(from, to));
  }
  if (!existsSync(join(copy, "go.mod"))) writeFileSync(join(copy, "go.mod"), `module ${module}\n\ngo 1.12\n`);
  await go(["mod", "edit", `-replace=${module}=./${folder}`], work, `go mod edit -replace=${module}`);
}

/** The CLI of `version`, built once; answers its path. */
export async function ensurePulumiCli(version) {
  const goVersion = requireGo(`the Pulumi CLI ${version} (or install it: https://www.pulumi.com/docs/install/)`);
  const inputs = { version, go: goVersion, lazyWordLists: [LAZY_WORD_LISTS, LAZY_WORD_LIST_MODULES] };
  const { folder } = await ensureArtefact("pulumi-cli", inputs, async (work, build) => {
    process.stderr.write(`[engine] building Pulumi ${version} from Go modules (first run only; several minutes)\n`);
    const target = `${ENGINE_MODULE}/cmd/pulumi`;
    await prepareModuleBuild(build, ENGINE_MODULE, version, target, [`${SDK_MODULE} v${version}`]);
    for (const module of LAZY_WORD_LIST_MODULES) await replaceWithLazyCopy(build, module);
    await goBuild(build, target, join(work, "pulumi"), { ldflags: versionFlag(version), what: "compiling pulumi" });
    return { source: `${ENGINE_MODULE} v${version}` };
  });
  return join(folder, "pulumi");
}
