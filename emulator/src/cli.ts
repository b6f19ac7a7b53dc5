import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { RunningEmulator } from "./index";
import type { EmulatorOptions, EmulatorTls, RateLimitOption } from "./options";
import { loadPartnersFile } from "./partners";
import { PROFILE_ENV, PROFILE_NAMES, type ProfileName } from "./profiles";

/** The CLI's port when none is given (in-process starts default to a random port). */
export const DEFAULT_CLI_PORT = 4010;

export const USAGE = `Usage: dmarc-emulator [options]

  --port <n>                 TCP port (default ${DEFAULT_CLI_PORT}; 0 picks a free one)
  --host <address>           listen address (default 127.0.0.1)
  --tls-cert <file>          serve https with this certificate (PEM), with --tls-key (default plain http)
  --tls-key <file>           the certificate's private key (PEM)
  --partners <file>          JSON array of partners (default: two demo partners)
  --request-log <file>       append every API request and answer as JSON lines, secrets redacted
                             (default: env DMARC_EMULATOR_REQUEST_LOG)
  --state-file <file>        keep the state in this file across restarts (default: memory only)
  --profile <name>           answer as the service's OpenAPI description ("published") or its
                             guides ("guides") where they differ (default: env ${PROFILE_ENV}, else published)
  --token-ttl <seconds>      expires_in of issued tokens (default 300 published, 3600 guides)
  --dns-resolver <host:port> verify domains through this DNS server (default: the simulated zone)
  --dns-host <address>       listen address of the simulated zone (default 127.0.0.1)
  --dns-check-interval <ms>  pause between verification checks (default 5000)
  --dns-window <ms>          how long a missing DMARC record may take to appear (default 86400000)
  --retry-scale <factor>     multiply the webhook retry schedule (default 1)
  --webhook-timeout <ms>     time a webhook receiver has to answer (default 3000)
  --rate-limit <n>/<seconds> admit n API requests per that many seconds, 429 beyond (default none)
  --rate-limit-hints <which> what a 429 says of when to come back: both (Retry-After and
                             retryAfterSeconds), header, body, or none as the published example
                             (default both)
  --rate-limit-window <kind> sliding (any last <seconds>) or fixed (each period of the clock)
                             (default sliding)
  --log-level <level>        pino level on stderr: fatal, error, warn, info, debug, trace, silent (default info)
  --help                     show this text
`;

function number(name: string, value: string | undefined, { integer = false, max = Number.MAX_SAFE_INTEGER } = {}) {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (
    value.trim() === "" ||
    !Number.isFinite(parsed) ||
    parsed < 0 ||
    parsed > max ||
    (integer && !Number.isInteger(parsed))
  ) {
    throw new Error(`--${name} must be a${integer ? " whole" : ""} number from 0 to ${max}, not "${value}"`);
  }
  return parsed;
}

const RATE_LIMIT_HINTS = ["both", "header", "body", "none"] as const;
const RATE_LIMIT_WINDOWS = ["sliding", "fixed"] as const;

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined || (allowed as readonly string[]).includes(value)) return value as T | undefined;
  throw new Error(`--${name} must be one of ${allowed.join(", ")}, not "${value}"`);
}

/** `--rate-limit 60/60` and its two companions, which mean nothing without it. */
function rateLimitOf(
  limit: string | undefined,
  hints: string | undefined,
  window: string | undefined,
): RateLimitOption | undefined {
  if (limit === undefined) {
    if (hints !== undefined || window !== undefined) {
      throw new Error("--rate-limit-hints and --rate-limit-window go with --rate-limit <n>/<seconds>");
    }
    return undefined;
  }
  const [, requests, perSeconds] = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(limit) ?? [];
  if (requests === undefined || perSeconds === undefined || Number(requests) < 1 || Number(perSeconds) <= 0) {
    throw new Error(`--rate-limit must be <requests>/<seconds> such as 60/60 (the published limit), not "${limit}"`);
  }
  return {
    requests: Number(requests),
    perSeconds: Number(perSeconds),
    hints: oneOf("rate-limit-hints", hints, RATE_LIMIT_HINTS) ?? "both",
    window: oneOf("rate-limit-window", window, RATE_LIMIT_WINDOWS) ?? "sliding",
  };
}

function tlsOf(certFile: string | undefined, keyFile: string | undefined): EmulatorTls | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) throw new Error("--tls-cert and --tls-key go together");
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
}

const COMMAND_LINE_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  partners: { type: "string" },
  "request-log": { type: "string" },
  "state-file": { type: "string" },
  "token-ttl": { type: "string" },
  profile: { type: "string" },
  "dns-resolver": { type: "string" },
  "dns-host": { type: "string" },
  "dns-check-interval": { type: "string" },
  "dns-window": { type: "string" },
  "retry-scale": { type: "string" },
  "webhook-timeout": { type: "string" },
  "rate-limit": { type: "string" },
  "rate-limit-hints": { type: "string" },
  "rate-limit-window": { type: "string" },
  "log-level": { type: "string" },
  help: { type: "boolean" },
} as const;

/** Options from the command line; undefined when --help was asked for. */
export function parseCommandLine(argv: string[]): EmulatorOptions | undefined {
  const { values } = parseArgs({ args: argv, strict: true, options: COMMAND_LINE_OPTIONS });
  if (values.help) return undefined;
  const dnsResolver = values["dns-resolver"];
  if (dnsResolver !== undefined && !/^(\[[0-9a-f:]+\]|[^:\s]+):\d{1,5}$/i.test(dnsResolver)) {
    throw new Error(`--dns-resolver must be host:port, such as 127.0.0.1:53, not "${dnsResolver}"`);
  }
  const rateLimit = rateLimitOf(values["rate-limit"], values["rate-limit-hints"], values["rate-limit-window"]);
  const profile = values.profile;
  if (profile !== undefined && !PROFILE_NAMES.includes(profile as ProfileName)) {
    throw new Error(`--profile must be ${PROFILE_NAMES.join(" or ")}, not "${profile}"`);
  }
  const tls = tlsOf(values["tls-cert"], values["tls-key"]);
  return {
    ...(rateLimit ? { rateLimit } : {}),
    ...(tls ? { tls } : {}),
    ...(profile === undefined ? {} : { profile: profile as ProfileName }),
    port: number("port", values.port, { integer: true, max: 65_535 }) ?? DEFAULT_CLI_PORT,
    host: values.host,
    partners: values.partners === undefined ? undefined : loadPartnersFile(values.partners),
    requestLogFile: values["request-log"],
    stateFile: values["state-file"],
    tokenTtlSeconds: number("token-ttl", values["token-ttl"], { integer: true }),
    retryScale: number("retry-scale", values["retry-scale"]),
    webhookTimeoutMs: number("webhook-timeout", values["webhook-timeout"], { integer: true }),
    dns: {
      resolver: dnsResolver,
      host: values["dns-host"],
      checkIntervalMs: number("dns-check-interval", values["dns-check-interval"], { integer: true }),
      windowMs: number("dns-window", values["dns-window"], { integer: true }),
    },
    logger: { level: values["log-level"] ?? "info" },
  };
}

/** What the CLI prints once it is ready: where it listens and how to point the provider at it. */
export function banner(emulator: RunningEmulator, readyMs: number): string {
  const lines = [
    `DMARC partner API emulator listening on ${emulator.url} (ready in ${Math.round(readyMs)} ms, profile ${emulator.profile})`,
  ];
  if (emulator.dnsServer && emulator.dnsKey) {
    const key = emulator.dnsKey;
    lines.push(
      `Simulated DNS zone on ${emulator.dnsServer} (UDP and TCP): publish records by RFC 2136 update (Rfc2136Record) signed with`,
      `  key name:      ${key.name}`,
      `  key algorithm: ${key.algorithm}`,
      `  key secret:    ${key.secret}`,
    );
  }
  lines.push("", "Partners:");
  for (const partner of emulator.partners) {
    lines.push(
      `  ${partner.id} (${partner.name})`,
      `    client id:     ${partner.clientId}`,
      `    client secret: ${partner.clientSecret}`,
      ...partner.tokens.map((token) => `    static token:  ${token}`),
    );
  }
  const first = emulator.partners[0];
  if (first) {
    lines.push(
      "",
      `Point the provider at it (here as ${first.id}), with environment variables:`,
      `  export DMARC_BASE_URL=${emulator.url}`,
      `  export DMARC_CLIENT_ID=${first.clientId}`,
      `  export DMARC_CLIENT_SECRET=${first.clientSecret}`,
      `  export DMARC_PARTNER_ID=${first.id}`,
      ...(first.tokens[0] ? [`  (or instead of the client: export DMARC_ACCESS_TOKEN=${first.tokens[0]})`] : []),
      "or with stack configuration:",
      `  pulumi config set dmarc:baseUrl ${emulator.url}`,
      `  pulumi config set dmarc:clientId ${first.clientId}`,
      `  pulumi config set --secret dmarc:clientSecret ${first.clientSecret}`,
      `  pulumi config set dmarc:partnerId ${first.id}`,
    );
  }
  lines.push("", "Press Ctrl+C to stop.");
  return `${lines.join("\n")}\n`;
}
