import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { digestOf, ensureArtefact } from "../../scripts/build/artefact.mjs";
import { artefactRoot, projectRoot } from "../../scripts/project.mjs";

// The one cache rule of what the build makes (scripts/build/artefact.mjs),
// with real processes: made once however many ask at once, whole or not at
// all, a dead maker's lock taken over, older builds pruned but for the
// recent ones.

const kinds: string[] = [];
/** A kind of artefact of this test's own, removed after it. */
function testKind(name: string): string {
  const kind = `test-${name}-${process.pid}`;
  kinds.push(kind);
  return kind;
}

afterAll(() => {
  for (const kind of kinds) rmSync(join(artefactRoot, kind), { recursive: true, force: true });
});

/** A node process that ensures `kind` of `inputs`, its making taking `makeMs` and logged to `log`; its output. */
function maker(kind: string, inputs: unknown, log: string, makeMs: number): Promise<string> {
  const script = `
    import { appendFileSync, writeFileSync } from "node:fs";
    import { join } from "node:path";
    import { ensureArtefact } from ${JSON.stringify(join(projectRoot, "scripts", "build", "artefact.mjs"))};
    const { folder, made } = await ensureArtefact(${JSON.stringify(kind)}, ${JSON.stringify(inputs)}, async (work) => {
      appendFileSync(${JSON.stringify(log)}, process.pid + "\\n");
      await new Promise((done) => setTimeout(done, ${makeMs}));
      writeFileSync(join(work, "content"), "made by " + process.pid);
    });
    process.stdout.write(JSON.stringify({ folder, made }));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`maker exit ${code}: ${err}`))));
  });
}

describe("an artefact", () => {
  it("is made once when three processes ask for it at once, and each finds it whole", async () => {
    const kind = testKind("concurrent");
    const log = join(artefactRoot, kind, "..", `${kind}.log`);
    mkdirSync(join(artefactRoot, kind), { recursive: true });
    writeFileSync(log, "");
    try {
      const answers = (await Promise.all([1, 2, 3].map(() => maker(kind, { n: 1 }, log, 1500)))).map(
        (text) => JSON.parse(text) as { folder: string; made: boolean },
      );
      const makers = readFileSync(log, "utf8").trim().split("\n");
      expect(makers).toHaveLength(1);
      expect(answers.filter(({ made }) => made)).toHaveLength(1);
      expect(new Set(answers.map(({ folder }) => folder)).size).toBe(1);
      const folder = answers[0]?.folder as string;
      expect(readFileSync(join(folder, "content"), "utf8")).toBe(`made by ${makers[0]}`);
      expect(readdirSync(join(artefactRoot, kind))).toEqual([digestOf({ n: 1 })]);
    } finally {
      rmSync(log, { force: true });
    }
  }, 60_000);

  it("is found made by the same inputs, and made anew by others", async () => {
    const kind = testKind("inputs");
    let makings = 0;
    const make = () => {
      makings += 1;
    };
    const first = await ensureArtefact(kind, { version: "1", files: { "a.txt": Buffer.from("a") } }, make);
    const again = await ensureArtefact(kind, { files: { "a.txt": Buffer.from("a") }, version: "1" }, make);
    const other = await ensureArtefact(kind, { version: "1", files: { "a.txt": Buffer.from("b") } }, make);
    expect([first.made, again.made, other.made]).toEqual([true, false, true]);
    expect(again.folder).toBe(first.folder);
    expect(other.folder).not.toBe(first.folder);
    expect(makings).toBe(2);
    expect(first.manifest).toMatchObject({
      kind,
      digest: digestOf({ version: "1", files: { "a.txt": Buffer.from("a") } }),
    });
  });

  it("is left unmade when its making fails: no folder, no work folder, no lock, and the error as it was", async () => {
    const kind = testKind("failing");
    await expect(
      ensureArtefact(kind, { n: 1 }, (work) => {
        writeFileSync(join(work, "half"), "half of it");
        throw new Error("the compiler said no");
      }),
    ).rejects.toThrow("the compiler said no");
    expect(readdirSync(join(artefactRoot, kind))).toEqual([]);
  });

  it("takes over the lock of a maker that died", async () => {
    const kind = testKind("orphan-lock");
    const lock = join(artefactRoot, kind, `${digestOf({ n: 1 })}.lock`);
    mkdirSync(lock, { recursive: true });
    // A pid no process has: past the kernel's largest.
    writeFileSync(join(lock, "pid"), "4194999");
    const { made, folder } = await ensureArtefact(kind, { n: 1 }, (work) => writeFileSync(join(work, "content"), "x"));
    expect(made).toBe(true);
    expect(existsSync(join(folder, "content"))).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it("prunes the kind's builds unused for an hour, but the most recently used one, once another is made", async () => {
    const kind = testKind("prune");
    const make = () => undefined;
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const folders: string[] = [];
    for (const n of [1, 2, 3, 4]) folders.push((await ensureArtefact(kind, { n }, make)).folder);
    const [oldest, older, recentlyUsed, olderStill] = folders as [string, string, string, string];
    utimesSync(oldest, hoursAgo(5), hoursAgo(5));
    utimesSync(older, hoursAgo(3), hoursAgo(3));
    utimesSync(olderStill, hoursAgo(4), hoursAgo(4));
    utimesSync(recentlyUsed, hoursAgo(0.5), hoursAgo(0.5));
    const newest = (await ensureArtefact(kind, { n: 5 }, make)).folder;
    expect(folders.filter(existsSync)).toEqual([recentlyUsed]);
    expect(existsSync(newest)).toBe(true);
    // Used again: kept, though unused for hours before, as the most recently used other build.
    utimesSync(recentlyUsed, hoursAgo(2), hoursAgo(2));
    await ensureArtefact(kind, { n: 1 }, make);
    expect(existsSync(recentlyUsed)).toBe(false);
    expect(existsSync(newest)).toBe(true);
  });
});
