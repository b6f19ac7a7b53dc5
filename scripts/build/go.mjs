// Building Go programs from the module proxy, the one way the project does
// it: one Go environment, our own programs built from a copy of their
// sources, and a throwaway module for programs of modules that carry
// `replace` directives (which `go install module@version` refuses).

import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ask, runProcess } from "./process.mjs";

/** Never another Go toolchain (only the module proxy is reachable), and modules resolved as go.mod says. */
export const GO_ENV = { GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod -buildvcs=false" };

let installedGo;

/** The installed Go's version (`go1.25.1`), an input of every Go artefact; undefined when there is none. */
function goVersion() {
  if (installedGo === undefined) {
    const probe = ask("go", ["env", "GOVERSION"]);
    installedGo = probe.ok ? probe.stdout.trim() : "";
  }
  return installedGo || undefined;
}

/** Fails, saying what Go is needed for, when Go is not installed; answers its version. */
export function requireGo(forWhat) {
  const version = goVersion();
  if (!version) throw new Error(`Go 1.25+ (https://go.dev/dl/) is needed to build ${forWhat}.`);
  return version;
}

/**
 * The files, relative to the Go module in `folder`, that a program of it is
 * built from: go.mod and go.sum, and the sources below `packages` (all of
 * the module by default); Python files are embedded in the Python language host.
 */
function sourceFiles(folder, packages = ["."]) {
  const sources = packages.flatMap((pkg) =>
    readdirSync(join(folder, pkg), { recursive: true })
      .map((name) => join(pkg, name))
      .filter((path) => /\.(go|py)$/.test(path)),
  );
  return ["go.mod", "go.sum", ...sources].sort();
}

/** The sources a program of `folder` is built from, as an artefact's input: each path with its content. */
export function sourceInputs(folder, packages) {
  return Object.fromEntries(sourceFiles(folder, packages).map((path) => [path, readFileSync(join(folder, path))]));
}

/** Runs `go` with GO_ENV in `cwd`, its progress shown under `tag`. */
export function go(args, cwd, what, tag = "go") {
  return runProcess("go", args, { cwd, env: GO_ENV, what, tag });
}

/**
 * The `replace` lines of `modulePath`'s go.mod at `version` that point at
 * other modules (a throwaway module must repeat them to build it); local
 * ones are left out.
 */
function nonLocalReplaces(modulePath, version) {
  const probe = ask("go", ["mod", "download", "-json", `${modulePath}@v${version}`], { env: GO_ENV });
  const info = JSON.parse(probe.stdout || "{}");
  if (!probe.ok || !info.GoMod) {
    throw new Error(`cannot download ${modulePath}@v${version}: ${info.Error ?? probe.said}`);
  }
  const goMod = readFileSync(info.GoMod, "utf8");
  const replaces = [];
  for (const [, from, target, targetVersion] of goMod.matchAll(
    /^replace\s+(\S+)(?:\s+\S+)?\s+=>\s+(\S+)(?:\s+(\S+))?\s*$/gm,
  )) {
    if (target.startsWith(".") || target.startsWith("/")) continue;
    replaces.push(`replace ${from} => ${target} ${targetVersion ?? ""}`.trim());
  }
  return replaces;
}

/**
 * Fills `work` with a throwaway module that requires `module` at `version`
 * (and `also`, "module version" lines) with its non-local replacements, and
 * resolves it so that `target`, a package of it, builds.
 */
export async function prepareModuleBuild(work, module, version, target, also = []) {
  mkdirSync(work, { recursive: true });
  const replaces = nonLocalReplaces(module, version);
  const requires = [`${module} v${version}`, ...also];
  writeFileSync(
    join(work, "go.mod"),
    [
      `module dmarc-partner/build`,
      "",
      "go 1.25",
      "",
      `require (\n${requires.map((line) => `\t${line}`).join("\n")}\n)`,
      "",
      ...replaces,
      "",
    ].join("\n"),
  );
  writeFileSync(join(work, "tools.go"), `//go:build tools\n\npackage tools\n\nimport _ "${target}"\n`);
  await go(["get", `${target}@v${version}`], work, "resolving modules");
}

/**
 * Fills `work` with a copy of our own Go module in `folder` (so builds never
 * write into scripts/) and moves it to `modules` ("path@version"), should
 * they differ from what its go.mod requires.
 */
export async function prepareOwnBuild(work, folder, modules) {
  for (const path of sourceFiles(folder)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    copyFileSync(join(folder, path), join(work, path));
  }
  await go(["get", ...modules], work, "resolving modules");
}

/** Builds `target` in the prepared `work` into `output`, stripped and without build paths. */
export function goBuild(work, target, output, { ldflags = "", flags = [], what = `compiling ${target}` } = {}) {
  const args = ["build", "-trimpath", ...flags, "-ldflags", `-s -w ${ldflags}`.trim(), "-o", output, target];
  return go(args, work, what, "engine");
}
