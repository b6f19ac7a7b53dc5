// The language hosts an official install ships beside `pulumi`, each an
// artefact of its own (`language-host-<language>`): Node.js, Go and Python,
// the official ones when the module proxy serves them at the engine's
// version, else this project's own from language-host/ (a command each, over
// its shared host/ package); and Pulumi YAML's at YAML_VERSION.

import { join, relative } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { goBuild, prepareModuleBuild, prepareOwnBuild, requireGo, sourceInputs } from "../build/go.mjs";
import { projectRoot, YAML_PULUMI_VERSION, YAML_VERSION } from "../project.mjs";
import { SDK_MODULE, versionFlag } from "./cli.mjs";

const ownHostModule = join(projectRoot, "scripts", "engine", "language-host");
const YAML_MODULE = "github.com/pulumi/pulumi-yaml";

/** The hosts, by the binary the engine looks for: the official module, or our own command's folder. */
const LANGUAGE_HOSTS = [
  {
    binary: "pulumi-language-nodejs",
    language: "Node.js",
    official: "github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3",
    command: "nodejs",
  },
  {
    binary: "pulumi-language-go",
    language: "Go",
    official: "github.com/pulumi/pulumi/sdk/go/pulumi-language-go/v3",
    command: "golang",
  },
  {
    binary: "pulumi-language-python",
    language: "Python",
    official: "github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3",
    command: "python",
  },
];

/** Why the module proxy refused `module`, in a line (for v3.246.0: "403 Forbidden: This module version is not available."). */
function refusal(error) {
  const status = /\b\d{3} [A-Z][A-Za-z ]*/.exec(error.message)?.[0];
  const response = /server response: (.*)/.exec(error.message)?.[1];
  return [status, response].filter(Boolean).join(": ") || error.message.split("\n")[0];
}

async function buildLanguageHost(host, version, work, scratch) {
  const output = join(work, host.binary);
  try {
    const build = join(scratch, "official");
    await prepareModuleBuild(build, host.official, version, host.official, [`${SDK_MODULE} v${version}`]);
    await goBuild(build, host.official, output, { ldflags: versionFlag(version), what: `compiling ${host.binary}` });
    return { source: "official" };
  } catch (error) {
    process.stderr.write(
      `[engine] the official ${host.language} language host ${version} is not available (${refusal(error)})\n`,
    );
  }
  const folder = relative(projectRoot, join(ownHostModule, host.command));
  process.stderr.write(`[engine] building this project's own ${host.language} language host from ${folder}/\n`);
  const own = join(scratch, "own");
  await prepareOwnBuild(own, ownHostModule, [`${SDK_MODULE}@v${version}`]);
  const ldflags = `-X dmarc-partner/language-host/host.version=v${version}`;
  await goBuild(own, `./${host.command}`, output, { ldflags, what: `compiling ${host.binary}` });
  return { source: folder };
}

async function buildYamlLanguageHost(work, scratch) {
  const target = `${YAML_MODULE}/cmd/pulumi-language-yaml`;
  await prepareModuleBuild(scratch, YAML_MODULE, YAML_VERSION, target);
  const ldflags = `-X ${YAML_MODULE}/pkg/version.Version=v${YAML_VERSION}`;
  await goBuild(scratch, target, join(work, "pulumi-language-yaml"), {
    ldflags,
    what: "compiling pulumi-language-yaml",
  });
  return { source: `${YAML_MODULE} v${YAML_VERSION}` };
}

/**
 * Every language host for the engine of `version`, each built once; answers
 * their paths. Ours are built again when their sources change, the official
 * ones only with the engine's version.
 */
export async function ensureLanguageHosts(version) {
  const goVersion = requireGo("the language hosts");
  const hosts = [];
  for (const host of LANGUAGE_HOSTS) {
    const inputs = {
      version,
      go: goVersion,
      official: host.official,
      own: sourceInputs(ownHostModule, ["host", host.command]),
    };
    const { folder } = await ensureArtefact(`language-host-${host.command}`, inputs, (work, scratch) => {
      process.stderr.write(`[engine] building the ${host.language} language host for Pulumi ${version}\n`);
      return buildLanguageHost(host, version, work, scratch);
    });
    hosts.push(join(folder, host.binary));
  }
  const yamlInputs = { version: YAML_VERSION, pulumi: YAML_PULUMI_VERSION, go: goVersion };
  const { folder } = await ensureArtefact("language-host-yaml", yamlInputs, (work, scratch) => {
    process.stderr.write(`[engine] building the YAML language host ${YAML_VERSION}\n`);
    return buildYamlLanguageHost(work, scratch);
  });
  return [...hosts, join(folder, "pulumi-language-yaml")];
}
