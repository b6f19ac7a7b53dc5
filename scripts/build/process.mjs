// The one way the scripts, the tests' support and the benchmark run another
// program. A step of a build (runProcess): asynchronously, so a test process
// that provisions keeps serving meanwhile; its output kept (the last part of
// it, for the error) and returned; bounded in time; a heartbeat on stderr
// while a long step runs; and an error that names the step, the command,
// how it ended and what it said last. A program that runs beside the caller
// (startProcess: a server, a daemon, a process a test stops): its output
// kept, its end awaited, the child the caller's to end. A question to a
// program (ask): at once, its answer whether or not it succeeded, for the
// quick probes a build decides by (`go env`, `pulumi version`). A task of
// `npm run` (runInTerminal): in the terminal, its exit code answered, and
// Ctrl-C passed on.

import { spawn, spawnSync } from "node:child_process";

const KEEP_CHARS = 8000;
const HEARTBEAT_MS = 15_000;

/**
 * Runs `command` with `args`; answers its standard output.
 * @param {string} command
 * @param {string[]} args
 * @param {{ what?: string, cwd?: string, env?: Record<string, string | undefined>, timeoutMs?: number, tag?: string }} [options]
 *   `what` names the step in errors and heartbeats (default: the command line); `env` is added to this
 *   process's; `timeoutMs` bounds the run (default 20 minutes); `tag` (like "engine") turns on a heartbeat.
 * @returns {Promise<string>}
 */
export function runProcess(command, args, { what, cwd, env = {}, timeoutMs = 20 * 60_000, tag } = {}) {
  const step = what ?? [command, ...args].join(" ");
  return new Promise((resolveRun, reject) => {
    const started = Date.now();
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
    });
    let stdout = "";
    let tail = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      tail = (tail + chunk).slice(-KEEP_CHARS);
    });
    child.stderr.on("data", (chunk) => {
      tail = (tail + chunk).slice(-KEEP_CHARS);
    });
    const heartbeat =
      tag &&
      setInterval(() => {
        const lastLine = tail.trimEnd().split("\n").at(-1)?.slice(0, 120) ?? "";
        process.stderr.write(`[${tag}]   ${step}: ${Math.round((Date.now() - started) / 1000)}s ${lastLine}\n`);
      }, HEARTBEAT_MS);
    const finish = () => heartbeat && clearInterval(heartbeat);
    child.on("error", (error) => {
      finish();
      reject(new Error(`${step} failed (${command}: ${error.message})`));
    });
    child.on("close", (code, signal) => {
      finish();
      if (code === 0) resolveRun(stdout);
      else {
        const ending = signal
          ? `ended by ${signal}${signal === "SIGTERM" ? ` after ${timeoutMs} ms at most` : ""}`
          : `exit ${code}`;
        reject(
          new Error(`${step} failed (${[command, ...args].join(" ")}${cwd ? ` in ${cwd}` : ""}: ${ending}):\n${tail}`),
        );
      }
    });
  });
}

/**
 * A program started beside the caller (startProcess).
 * @typedef {{ child: import("node:child_process").ChildProcess, said: () => string, ended: Promise<{ code: number | null, signal: NodeJS.Signals | null, error?: Error }> }} StartedProcess
 */

/** How much of what a program started beside the caller says is kept. */
const KEEP_STARTED_CHARS = 64_000;

/**
 * Starts `command` with `args` beside this process and answers at once: the
 * child (to write to, signal or kill: the caller ends it), what it has said
 * so far on stdout and stderr together (the last part, `said()`), and how it
 * ended once it has (`ended`, which never rejects; `error` is set when it
 * could not start).
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, env?: Record<string, string | undefined>, ownEnv?: boolean, stdin?: "ignore" | "pipe", output?: "pipe" | "inherit" | number, ipc?: boolean, detached?: boolean }} [options]
 *   `env` is added to this process's, or is the whole environment with `ownEnv`; `output` is where stdout and
 *   stderr go (kept only when piped, the default; a number is a file descriptor); `ipc` opens Node.js's message
 *   channel to a Node.js child; `detached` starts it as the leader of a process group of its own.
 * @returns {StartedProcess}
 */
export function startProcess(
  command,
  args,
  { cwd, env = {}, ownEnv = false, stdin = "ignore", output = "pipe", ipc = false, detached = false } = {},
) {
  /** @type {import("node:child_process").StdioOptions} */
  const stdio = [stdin, output, output, ...(ipc ? /** @type {const} */ (["ipc"]) : [])];
  const child = spawn(command, args, { cwd, env: ownEnv ? env : { ...process.env, ...env }, stdio, detached });
  let kept = "";
  const keep = (chunk) => {
    kept = (kept + chunk).slice(-KEEP_STARTED_CHARS);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const ended = new Promise((resolveEnd) => {
    child.once("error", (error) => resolveEnd({ code: null, signal: null, error }));
    child.once("close", (code, signal) => resolveEnd({ code, signal }));
  });
  return { child, said: () => kept, ended };
}

/**
 * Runs `command` with `args` in the terminal (its output is the user's to
 * read); SIGINT and SIGTERM are passed on; answers its exit code.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, env?: Record<string, string | undefined> }} [options]
 * @returns {Promise<number>}
 */
export function runInTerminal(command, args, { cwd, env = {} } = {}) {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { cwd, stdio: "inherit", env: { ...process.env, ...env } });
    const forward = (signal) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("close", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolveRun(code ?? (signal ? 1 : 0));
    });
  });
}

/**
 * Asks `command` something at once: answers whether it succeeded, what it
 * wrote to stdout, and both its outputs together (for a message); a program
 * that is not installed did not succeed.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, env?: Record<string, string | undefined>, input?: string }} [options]
 * @returns {{ ok: boolean, stdout: string, said: string }}
 */
export function ask(command, args, { cwd, env = {}, input } = {}) {
  const result = spawnSync(command, args, { cwd, env: { ...process.env, ...env }, input, encoding: "utf8" });
  const stdout = result.stdout ?? "";
  return { ok: result.status === 0, stdout, said: `${stdout}${result.stderr ?? ""}`.trim() };
}
