import { createReadStream, existsSync, mkdirSync, statSync, symlinkSync } from "node:fs";
import { createServer } from "node:http";
import { delimiter, dirname, join } from "node:path";
import { PLUGIN_DOWNLOAD_URL } from "../../provider/src/plugin/schema";
import { ask } from "../../scripts/build/process.mjs";
import { listenOnLoopback } from "./loopback";

// The plugin as a partner's machine gets it: a release of archives served
// over HTTP, as a GitHub release serves them, and a PATH on which Pulumi,
// its YAML language host and a few basic tools are found, but no `node`.

/** The schema's `pluginDownloadURL`, which the override below redirects. */
export const RELEASE_ADDRESS = PLUGIN_DOWNLOAD_URL;

export interface ReleaseServer {
  /** The server's address. */
  url: string;
  /** Where Pulumi downloads from, `${VERSION}` left for Pulumi to fill, as a mirror of every release is written. */
  downloadUrl: string;
  /** Every path asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves `folder`'s files at `/download/v<any version>/<name>`, as a release's assets; 404 for anything else. */
export async function releaseServer(folder: string): Promise<ReleaseServer> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const path = request.url ?? "";
    requests.push(path);
    const name = /^\/download\/v[^/]+\/([^/]+)$/.exec(path)?.[1];
    const file = name ? join(folder, decodeURIComponent(name)) : undefined;
    if (!file || !existsSync(file)) {
      response.writeHead(404).end("Not Found");
      return;
    }
    // A length, as a release's download answers with: Pulumi refuses a download of unknown length.
    response.writeHead(200, { "content-type": "application/gzip", "content-length": statSync(file).size });
    createReadStream(file).pipe(response);
  });
  const { url, close } = await listenOnLoopback(server);
  return { url, downloadUrl: `${url}/download/v\${VERSION}`, requests, close };
}

/** PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES sending the release address to `downloadUrl` (`regexp=URL`, comma-separated). */
export function downloadOverride(downloadUrl: string): string {
  return `^${RELEASE_ADDRESS.replace(/[.]/g, "\\.")}$=${downloadUrl}`;
}

/** Where `command` is found on `path`, or undefined. */
function findOnPath(command: string, path: string): string | undefined {
  for (const folder of path.split(delimiter)) {
    const candidate = join(folder, command);
    if (folder && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The tools of a slim image that a pipeline's shell steps use; none of them is Node.js. */
const BASIC_TOOLS = ["sh", "env", "cat", "ls", "tar", "gzip", "uname"];

/**
 * A PATH of the folder holding `pulumi` (and, beside it, its language
 * hosts) and a folder of links to a few basic tools, with no `node` on it:
 * checked by the shell's own lookup.
 */
export function pathWithoutNode(work: string, enginePath: string): string {
  const pulumi = findOnPath("pulumi", enginePath);
  if (!pulumi) throw new Error(`no pulumi on the engine's PATH ${enginePath}`);
  const tools = join(work, "basic tools");
  mkdirSync(tools, { recursive: true });
  for (const tool of BASIC_TOOLS) {
    const found = findOnPath(tool, process.env.PATH ?? "");
    if (found && !existsSync(join(tools, tool))) symlinkSync(found, join(tools, tool));
  }
  const path = [dirname(pulumi), tools].join(delimiter);
  const lookup = ask("/bin/sh", ["-c", "command -v node"], { env: { PATH: path } });
  if (lookup.ok) throw new Error(`node is on the PATH meant to have none: ${lookup.stdout.trim()}`);
  return path;
}
