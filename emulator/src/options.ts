import type { LoggerOptions } from "pino";
import type { z } from "zod";
import { generatedZoneKey, type ZoneKey } from "./dns/zone";
import type { FaultSpec } from "./faults";
import { DEMO_PARTNERS, type EmulatorPartner } from "./partners";
import { type ProfileName, profileNamed, type WireProfile } from "./profiles";

export interface EmulatorOptions {
  /** TCP port; 0 picks a free one. Default 0 in-process; the CLI defaults to 4010. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Serve https with this certificate and key (PEM); default plain http, as a loopback address needs. */
  tls?: EmulatorTls;
  /** Default: two built-in demo partners (see README). */
  partners?: EmulatorPartner[];
  /**
   * Which of the service's two self-descriptions the answers follow where they
   * differ: "published" (its OpenAPI description) or "guides". Default: env
   * DMARC_EMULATOR_PROFILE, else "published".
   */
  profile?: ProfileName;
  /** `expires_in` of tokens from POST /auth/token. Default: the profile's (300 published, 3600 guides). */
  tokenTtlSeconds?: number;
  /** Lifetime of a magic link. Default 900 (15 minutes). */
  magicLinkTtlSeconds?: number;
  /** JSON-lines log of API requests, secrets redacted. Default: env DMARC_EMULATOR_REQUEST_LOG, else none. */
  requestLogFile?: string;
  /** Keeps the state in this JSON file across restarts (atomic writes). Default: memory only. */
  stateFile?: string;
  /** Time a webhook receiver has to answer. Default 3000. */
  webhookTimeoutMs?: number;
  /** Multiplies the webhook retry schedule; tests use e.g. 0.001. Default 1. */
  retryScale?: number;
  dns?: {
    /** "host:port" of a real DNS server. Default: the emulator's simulated zone, served on a loopback UDP port. */
    resolver?: string;
    /** Pause between periodic checks of unverified domains. Default 5000. */
    checkIntervalMs?: number;
    /** How long after a domain is added a missing record stays "not yet" before it fails. Default 24 hours. */
    windowMs?: number;
    /** UDP and TCP port of the simulated zone; 0 picks a free one. Default 0. */
    port?: number;
    /** Address the simulated zone listens on. Default 127.0.0.1. */
    host?: string;
    /** The TSIG key RFC 2136 updates to the simulated zone must be signed with. Default: one generated at start. */
    tsigKey?: ZoneKey;
  };
  /** pino logging to stderr: true for level info, or pino options. Default false (silent). */
  logger?: boolean | LoggerOptions;
  /** A rate limit on every API route from the start, as the fault `{ route: "*", rateLimit }`. Default none. */
  rateLimit?: RateLimitOption;
}

export type RateLimitOption = NonNullable<z.input<typeof FaultSpec>["rateLimit"]>;

export type ResolvedOptions = Required<
  Omit<EmulatorOptions, "requestLogFile" | "stateFile" | "dns" | "profile" | "rateLimit" | "tls">
> & {
  profile: WireProfile;
  tls: EmulatorTls | undefined;
  requestLogFile: string | undefined;
  stateFile: string | undefined;
  rateLimit: RateLimitOption | undefined;
  dns: {
    resolver: string | undefined;
    checkIntervalMs: number;
    windowMs: number;
    port: number;
    host: string;
    tsigKey: ZoneKey;
  };
};

export interface EmulatorTls {
  cert: string;
  key: string;
}

const REQUEST_LOG_ENV = "DMARC_EMULATOR_REQUEST_LOG";

export function resolveOptions(options: EmulatorOptions): ResolvedOptions {
  const profile = profileNamed(options.profile);
  return {
    profile,
    port: options.port ?? 0,
    host: options.host ?? "127.0.0.1",
    tls: options.tls,
    partners: options.partners ?? DEMO_PARTNERS,
    tokenTtlSeconds: options.tokenTtlSeconds ?? profile.tokenTtlSeconds,
    magicLinkTtlSeconds: options.magicLinkTtlSeconds ?? 900,
    requestLogFile: options.requestLogFile ?? (process.env[REQUEST_LOG_ENV] || undefined),
    stateFile: options.stateFile,
    webhookTimeoutMs: options.webhookTimeoutMs ?? 3000,
    retryScale: options.retryScale ?? 1,
    dns: {
      resolver: options.dns?.resolver,
      checkIntervalMs: options.dns?.checkIntervalMs ?? 5000,
      windowMs: options.dns?.windowMs ?? 24 * 60 * 60 * 1000,
      port: options.dns?.port ?? 0,
      host: options.dns?.host ?? "127.0.0.1",
      tsigKey: options.dns?.tsigKey ?? generatedZoneKey(),
    },
    logger: options.logger ?? false,
    rateLimit: options.rateLimit,
  };
}
