// The one cache rule of everything the project builds for itself (the engine
// and its hosts, the code generators, the SDKs, the plugin's executable, the
// Node.js lines, the Python environments, the workflow linters): an artefact
// is made from named inputs into `.cache/<artefact>/<digest>/`, where the
// digest is of those inputs, so that the same inputs find it made and other
// inputs make another. Dependency-free, like every script that runs before
// `npm ci` has finished.
//
// Made once at a time: a lock folder beside it, holding its maker's pid, that
// other processes wait on (polled each second, bounded) and take over when
// its maker has died; made in a work folder of the process's own and renamed
// into place whole, so a reader finds it whole or not at all. Each use marks
// it used (its folder's time); a build then removes the kind's other digests
// but the most recently used ones, and never one used in the last hour,
// which a process running alongside may still be reading.

import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { artefactRoot } from "../project.mjs";

/** How long a process waits for another process's making of the same artefact before it gives up. */
const WAIT_FOR_OTHER_MAKER_MS = 30 * 60_000;
const POLL_MS = 1000;

/** Of a kind's other digests, how many of the most recently used stay, and how recent a use keeps any. */
const KEEP_RECENT = 2;
const IN_USE_MS = 60 * 60_000;

/** What a made artefact says of itself, beside its files. */
const MANIFEST = "artefact.json";

/**
 * A short digest of `inputs`: strings, Buffers, numbers, or arrays and plain objects of them.
 * @param {unknown} inputs
 * @returns {string}
 */
export function digestOf(inputs) {
  const hash = createHash("sha256");
  const feed = (value) => {
    if (Buffer.isBuffer(value)) hash.update("b").update(String(value.length)).update(":").update(value);
    else if (Array.isArray(value)) {
      hash.update("[");
      for (const item of value) feed(item);
      hash.update("]");
    } else if (value !== null && typeof value === "object") {
      hash.update("{");
      for (const key of Object.keys(value).sort()) {
        feed(key);
        feed(value[key]);
      }
      hash.update("}");
    } else hash.update(`${typeof value}:${String(value).length}:${String(value)}`);
  };
  feed(inputs);
  return hash.digest("hex").slice(0, 16);
}

/**
 * A file's digest, as an input of an artefact made from the file.
 * @param {string} path
 * @returns {string}
 */
export function fileDigest(path) {
  return createHash("sha256").update(readFileSync(path)).digest("hex").slice(0, 16);
}

/** Whether the maker holding `lock` still runs; a lock made in the last seconds, with no pid yet, counts as held. */
function holderRuns(lock) {
  try {
    return runs(Number(readFileSync(join(lock, "pid"), "utf8")));
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
}

function markUsed(folder) {
  const now = new Date();
  try {
    utimesSync(folder, now, now);
  } catch {}
}

/** An artefact's folder name: its digest (digestOf). */
const DIGEST = /^[0-9a-f]{16}$/;

/** Folders of a making under way: the artefact's, and the maker's scratch space. */
const UNDER_WAY = /\.(\d+)\.(partial|scratch)$/;

function runs(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code !== "ESRCH";
  }
}

/**
 * Removes the kind's digests but the KEEP_RECENT most recently used and any
 * used in the last IN_USE_MS, and the work folders of makers that died.
 */
function prune(kindFolder, made) {
  for (const name of readdirSync(kindFolder)) {
    const maker = UNDER_WAY.exec(name)?.[1];
    if (maker && !runs(Number(maker))) rmSync(join(kindFolder, name), { recursive: true, force: true });
  }
  const others = readdirSync(kindFolder)
    .filter((name) => name !== made && DIGEST.test(name))
    .map((name) => ({ name, used: statSync(join(kindFolder, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  for (const { name, used } of others.slice(KEEP_RECENT - 1)) {
    if (Date.now() - used > IN_USE_MS) rmSync(join(kindFolder, name), { recursive: true, force: true });
  }
}

/**
 * The artefact `kind` made from `inputs`: its folder when made before,
 * else made now by `make(work, scratch)`, which fills the work folder (what
 * it leaves in `scratch` is removed) and may answer a manifest to keep with it. Answers { folder, manifest, made }, `made`
 * true when this call made it.
 * @param {string} kind the artefact's kind, a folder name under .cache/
 * @param {unknown} inputs everything the artefact is made from
 * @param {(work: string, scratch: string) => Promise<object | undefined | void> | object | undefined | void} make
 * @returns {Promise<{ folder: string, manifest: Record<string, unknown>, made: boolean }>}
 */
export async function ensureArtefact(kind, inputs, make) {
  const kindFolder = join(artefactRoot, kind);
  const digest = digestOf(inputs);
  const folder = join(kindFolder, digest);
  const manifestOf = () => JSON.parse(readFileSync(join(folder, MANIFEST), "utf8"));
  if (existsSync(folder)) {
    markUsed(folder);
    return { folder, manifest: manifestOf(), made: false };
  }
  mkdirSync(kindFolder, { recursive: true });
  const lock = `${folder}.lock`;
  const giveUpAt = Date.now() + WAIT_FOR_OTHER_MAKER_MS;
  let made = false;
  while (!existsSync(folder)) {
    try {
      mkdirSync(lock);
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      if (!holderRuns(lock)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > giveUpAt) throw new Error(`another process has been making ${folder} for too long`);
      else await new Promise((resolvePoll) => setTimeout(resolvePoll, POLL_MS));
      continue;
    }
    try {
      writeFileSync(join(lock, "pid"), String(process.pid));
      if (existsSync(folder)) break;
      const work = `${folder}.${process.pid}.partial`;
      const scratch = `${folder}.${process.pid}.scratch`;
      for (const empty of [work, scratch]) {
        rmSync(empty, { recursive: true, force: true });
        mkdirSync(empty, { recursive: true });
      }
      process.stderr.write(`[build] making ${kind} (${digest})\n`);
      try {
        const manifest = (await make(work, scratch)) ?? {};
        writeFileSync(join(work, MANIFEST), `${JSON.stringify({ kind, digest, ...manifest }, null, 2)}\n`);
        renameSync(work, folder);
        made = true;
      } finally {
        rmSync(work, { recursive: true, force: true });
        rmSync(scratch, { recursive: true, force: true });
      }
      prune(kindFolder, digest);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  markUsed(folder);
  return { folder, manifest: manifestOf(), made };
}
