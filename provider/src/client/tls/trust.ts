import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import * as tls from "node:tls";

// Which certificate authorities a connection to the service, or to an
// https:// proxy, trusts. As the Pulumi CLI and every Go provider do, the
// operating system's store: a company CA installed with
// update-ca-certificates, or in the macOS or Windows store, is trusted with
// nothing more set. Beside it, Node.js's own list, NODE_EXTRA_CA_CERTS and
// the caFile setting, a stack's or a run's own PEM file.

type CertificateKind = "bundled" | "extra" | "system";

/**
 * Node.js's reader of its stores: 22.15 and later, and every 24, read the
 * operating system's (on Linux SSL_CERT_FILE and SSL_CERT_DIR, else
 * /etc/ssl/cert.pem and /etc/ssl/certs). Undefined on Node.js 20.
 */
const storeReader = (tls as { getCACertificates?: (kind: CertificateKind) => string[] }).getCACertificates;

/** How messages name the caFile setting: the client option, the provider's key and its variable. */
export const CA_FILE_SETTING = "caFile (dmarc:caFile, DMARC_CA_FILE)";

/** One place trusted certificates come from, and what it gave, as messages name them. */
interface TrustSource {
  readonly name: string;
  readonly gave: string;
}

/** What a connection trusts: the context its TLS handshakes use, and where its certificates came from. */
export interface Trust {
  /** Undefined: Node.js's own defaults, which hold everything trusted here. */
  readonly context: tls.SecureContext | undefined;
  readonly sources: readonly TrustSource[];
  /** Whether this Node.js reads the operating system's store (Node.js 20 does not). */
  readonly readsSystemStore: boolean;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

const certificatesIn = (text: string): string[] => text.match(PEM_CERTIFICATE) ?? [];

const counted = (count: number) => `${count} certificate${count === 1 ? "" : "s"}`;

/** Why `path` cannot serve as caFile (unreadable, no certificate, one that does not parse), or undefined when it can. */
export function caFileProblem(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): it must name a PEM file of one or more certificates`;
  }
  const certificates = certificatesIn(text);
  if (certificates.length === 0) return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)";
  const broken = certificates.findIndex((pem) => !parses(pem));
  return broken === -1 ? undefined : `holds a certificate that does not parse (number ${broken + 1} in the file)`;
}

function parses(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

/** NODE_EXTRA_CA_CERTS's certificates: Node.js's own reading where it says, else the file read here (Node.js 20). */
function extraCertificates(env: NodeJS.ProcessEnv): string[] {
  if (storeReader) return storeReader("extra");
  const path = env.NODE_EXTRA_CA_CERTS;
  if (!path) return [];
  try {
    return certificatesIn(readFileSync(path, "utf8"));
  } catch {
    return [];
  }
}

function sourcesOf(parts: {
  bundled: string[];
  system: string[] | undefined;
  extra: string[];
  caFile: string | undefined;
  own: string[];
  env: NodeJS.ProcessEnv;
}): TrustSource[] {
  const extraPath = parts.env.NODE_EXTRA_CA_CERTS;
  return [
    { name: "Node.js's own list", gave: counted(parts.bundled.length) },
    {
      name: "the operating system's store",
      gave:
        parts.system === undefined
          ? `not read by Node.js ${process.version}; 22.15 and later read it`
          : counted(parts.system.length),
    },
    { name: "NODE_EXTRA_CA_CERTS", gave: extraPath ? `${extraPath}: ${counted(parts.extra.length)}` : "unset" },
    { name: CA_FILE_SETTING, gave: parts.caFile ? `${parts.caFile}: ${counted(parts.own.length)}` : "unset" },
  ];
}

const trusts = new Map<string, Trust>();

/**
 * What connections trust with `caFile` (a PEM file, or undefined): read once
 * a process, when the first TLS connection is made, since reading the
 * operating system's store takes a moment.
 */
export function trustFor(caFile: string | undefined, env: NodeJS.ProcessEnv = process.env): Trust {
  const key = caFile ?? "";
  const known = trusts.get(key);
  if (known) return known;
  const bundled = [...tls.rootCertificates];
  const system = storeReader?.("system");
  const extra = extraCertificates(env);
  const own = caFile ? certificatesIn(readFileSync(caFile, "utf8")) : [];
  const added = [...(system ?? []), ...own];
  // A context is needed only to add to Node.js's defaults, which are its own list and NODE_EXTRA_CA_CERTS.
  const context =
    added.length === 0 ? undefined : tls.createSecureContext({ ca: [...new Set([...bundled, ...extra, ...added])] });
  const trust = {
    context,
    sources: sourcesOf({ bundled, system, extra, caFile, own, env }),
    readsSystemStore: system !== undefined,
  };
  trusts.set(key, trust);
  return trust;
}

/** The sources as a message lists them: "Node.js's own list (145 certificates), ...". */
export function describeTrust(trust: Trust): string {
  return trust.sources.map((source) => `${source.name} (${source.gave})`).join(", ");
}
