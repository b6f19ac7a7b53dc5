import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { type ComparedKind, type Figures, figuresOf, ratioOf, type Summary, shown, summarize } from "./figures";
import { type BaselineEntry, machineDescription, worseFlag } from "./lastRelease";
import type { BenchOptions } from "./options";
import { runProcess } from "./processes";
import { table } from "./report";

// `npm run bench -- --against <ref> <bench options>`: the same bench, this
// checkout's, run on another commit's package and on this checkout's, back
// to back, alternating (ref first in odd rounds, this checkout first in even
// ones) so that the machine's other work falls on both alike; both sides'
// medians and their ratio per figure. The other commit is built in a git
// worktree of its own by scripts/checkout.mjs (the artefact `checkout`). Each
// side runs one copy of this checkout's compiled bench from a folder whose
// node_modules is that side's tree's, so that the bench, the shards'
// programs and the dynamic provider load that side's package, emulator and
// @pulumi/pulumi, and the measuring is the same code on both.

/** One bench run of a side may take long: the fleet at 200 tenants with its single stack is several minutes. */
const RUN_TIMEOUT_MS = 3 * 60 * 60_000;

/** Options of --against itself, with whether each takes a value: the rest is the bench both sides run. */
const OWN_OPTIONS: Record<string, boolean> = { against: true, rounds: true, out: true, "save-baseline": false };

/** The command line without --against's own options: what each side's bench is given, its own --out added. */
export function sideArguments(argv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    const name = /^--([^=]+)/.exec(arg)?.[1];
    const takesValue = name === undefined ? undefined : OWN_OPTIONS[name];
    if (takesValue === undefined) kept.push(arg);
    else if (takesValue && !arg.includes("=")) index += 1;
  }
  return kept;
}

interface Side {
  label: string;
  main: string;
  env: Record<string, string>;
  runs: Figures[];
}

interface AgainstHooks {
  projectRoot: string;
  say(message: string): void;
}

/**
 * A folder to run the bench from on one side: a copy of this checkout's
 * compiled bench, taken when the comparison starts (a build during the runs
 * changes neither side), beside node_modules that are the side's tree's and
 * this checkout's scripts/ (the process runner the bench starts programs
 * with). The bench's project folders (.cache/projects) are made below it too.
 */
function benchMain(outDir: string, name: string, tree: string, projectRoot: string): string {
  const home = join(outDir, "against", name);
  rmSync(join(home, "bench"), { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  cpSync(join(projectRoot, "bench", "dist"), join(home, "bench", "dist"), { recursive: true });
  writeFileSync(join(home, "package.json"), `${JSON.stringify({ private: true, type: "commonjs" })}\n`);
  for (const [name, target] of [
    ["node_modules", join(tree, "node_modules")],
    ["scripts", join(projectRoot, "scripts")],
  ] as const) {
    rmSync(join(home, name), { force: true });
    symlinkSync(target, join(home, name), "dir");
  }
  return join(home, "bench", "dist", "main.js");
}

function row(name: string, reference: Summary, current: Summary, baseline: number | undefined): string[] {
  const range = (summary: Summary) =>
    summary.min === summary.max
      ? shown(name, summary.median)
      : `${shown(name, summary.median)} (${shown(name, summary.min)}–${shown(name, summary.max)})`;
  const ratio = ratioOf(current.median, reference.median);
  return [
    name,
    range(reference),
    range(current),
    ratio === null ? "-" : `${ratio.toFixed(2)}×`,
    worseFlag(current.median, reference.median),
    baseline === undefined ? "-" : shown(name, baseline),
  ];
}

interface AgainstResult {
  markdown: string;
  /** The other commit's medians, as bench/baseline.json keeps a release's figures. */
  reference: BaselineEntry;
}

/** Runs each side's bench `rounds` times, alternating which goes first; answers the order they ran in, with the load. */
async function runRounds(
  sides: readonly [Side, Side],
  rounds: number,
  run: (side: Side, round: number, what: string) => Promise<Figures>,
  say: (message: string) => void,
): Promise<string[]> {
  const order: string[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    for (const side of round % 2 === 1 ? sides : [sides[1], sides[0]]) {
      const what = `bench on ${side.label}, round ${round} of ${rounds}`;
      const load = (loadavg()[0] ?? 0).toFixed(1);
      say(`${what} (load ${load})`);
      side.runs.push(await run(side, round, what));
      order.push(`${side.label} (load ${load} → ${(loadavg()[0] ?? 0).toFixed(1)})`);
    }
  }
  return order;
}

/** Both sides' medians, ranges and ratio per figure, with the last release's figure where given. */
function comparison(reference: Side, current: Side, baseline: BaselineEntry | undefined): string {
  const before = summarize(reference.runs);
  const after = summarize(current.runs);
  const rows = Object.keys(after).flatMap((name) => {
    const then = before[name];
    const now = after[name];
    return then && now ? [row(name, then, now, baseline?.figures[name])] : [];
  });
  const release = `last release${baseline ? ` (${baseline.commit.slice(0, 7)})` : ""}`;
  const header = ["figure", reference.label, current.label, `this ÷ ${reference.label}`, "", release];
  return table(header, rows);
}

/**
 * Builds `options.against`, runs the bench `args` describe on it and on this
 * checkout `options.rounds` times each, alternating, and answers both sides'
 * figures side by side (with `baseline`'s, the last release's, where given).
 */
export async function against(
  options: BenchOptions & { against: string },
  kind: ComparedKind,
  workload: string,
  args: readonly string[],
  hooks: AgainstHooks,
  baseline: BaselineEntry | undefined,
): Promise<AgainstResult> {
  const { builtCheckout } = await import("../../scripts/checkout.mjs");
  hooks.say(`--against ${options.against}: building it in a worktree of its own (once per commit)`);
  const built = await builtCheckout(options.against);
  const short = built.commit.slice(0, 7);
  const { outDir, rounds } = options;
  const reference: Side = {
    label: short,
    main: benchMain(outDir, built.commit.slice(0, 12), built.tree, hooks.projectRoot),
    env: built.env,
    runs: [],
  };
  const current: Side = {
    label: "this checkout",
    main: benchMain(outDir, "checkout", hooks.projectRoot, hooks.projectRoot),
    env: {},
    runs: [],
  };
  const order = await runRounds(
    [reference, current],
    rounds,
    async (side, round, what) => {
      const out = join(outDir, "against", `${side === reference ? short : "checkout"}-${round}`);
      await runProcess(process.execPath, [side.main, ...args, "--out", out], {
        env: side.env,
        what,
        tag: "bench",
        timeoutMs: RUN_TIMEOUT_MS,
      });
      return figuresOf(kind, out);
    },
    hooks.say,
  );
  const markdown = [
    `### This checkout against ${short} (${options.against}, package ${built.packageVersion})`,
    "",
    `${workload}. The same bench (this checkout's) on each, ${rounds} round(s), alternating: ${order.join(", ")}. Medians, the range in brackets; ratios of the medians.`,
    "",
    comparison(reference, current, baseline),
    "",
  ].join("\n");
  const medians = Object.entries(summarize(reference.runs)).map(([name, summary]) => [name, summary.median]);
  const entry: BaselineEntry = {
    workload,
    release: built.packageVersion,
    commit: built.commit,
    measuredAt: new Date().toISOString(),
    machine: machineDescription(built.pulumiVersion),
    rounds,
    figures: Object.fromEntries(medians),
  };
  return { markdown, reference: entry };
}
