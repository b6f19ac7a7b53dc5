import type { FastifyRequest } from "fastify";
import type { Tokens } from "./auth";
import type { Dispatcher } from "./delivery";
import type { Verifier } from "./dns/verifier";
import type { SimulatedZone } from "./dns/zone";
import type { Faults } from "./faults";
import type { PartnerDirectory } from "./partners";
import type { WireProfile } from "./profiles";
import type { Stats } from "./stats";
import type { Store } from "./store";

/** The emulator's parts, as the routes see them. */
export interface Context {
  store: Store;
  partners: PartnerDirectory;
  tokens: Tokens;
  dispatcher: Dispatcher;
  verifier: Verifier;
  /** Absent when verification resolves through a real DNS server. */
  zone: SimulatedZone | undefined;
  faults: Faults;
  stats: Stats;
  /** The base URL the emulator answers on (magic links point at it). */
  baseUrl(): string;
  magicLinkTtlSeconds: number;
  /** Which self-description of the service the answers follow where its two differ. */
  profile: WireProfile;
}

export function param(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string | undefined>)[name] ?? "";
}

export function now(): string {
  return new Date().toISOString();
}
