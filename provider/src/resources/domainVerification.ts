import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { DomainName, type Domain as DomainRecord, DomainVerifiedEvent } from "../api";
import { DmarcApiError, type DmarcClient, DmarcTransportError, OutcomeUnknownError } from "../client";
import { joinId, splitId } from "../runtime/adopt";
import type { ProviderSettings } from "../runtime/config";
import type { ResourceDefinition } from "../runtime/lifecycle";
import { DmarcResource, TYPE_MODULE } from "../runtime/resource";

// Waits, in `create`, until the service reports the domain verified: the
// pattern of aws.acm.CertificateValidation, placed after the DNS record
// resource that publishes the Domain's setupRecord. Nothing is ever written to
// the service, so a failed or timed-out create can simply run again.

const UNITS_MS = { h: 3_600_000, m: 60_000, s: 1_000 } as const;
const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** Milliseconds of a duration written like Go's: "45m", "2h", "1h30m", "90s". */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!match || text === "") return undefined;
  const [, hours, minutes, seconds] = match;
  return Number(hours ?? 0) * UNITS_MS.h + Number(minutes ?? 0) * UNITS_MS.m + Number(seconds ?? 0) * UNITS_MS.s;
}

function describeDuration(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

function Duration(min: string, max: string) {
  const [minMs, maxMs] = [parseDuration(min) ?? 0, parseDuration(max) ?? 0];
  return z
    .string()
    .refine((text) => parseDuration(text) !== undefined, {
      message: 'must be a duration in hours, minutes and seconds such as "45m", "2h", "1h30m" or "90s"',
      abort: true,
    })
    .refine((text) => (parseDuration(text) ?? 0) >= minMs && (parseDuration(text) ?? 0) <= maxMs, {
      message: `must be between ${min} and ${max}`,
    });
}

/**
 * The service's DNS propagation "can take up to several hours" (spec); 45
 * minutes, the default of aws.ses.DomainIdentityVerification, fits a CI job's
 * limit (GitLab's default is 1 hour), and a rerun of `up` keeps waiting.
 */
export const DEFAULT_TIMEOUT = "45m";
/** First pause between two reads of the domain; pauses then grow by half up to {@link MAX_POLL_PAUSE_MS}. */
export const DEFAULT_POLL_INTERVAL = "15s";
const MAX_POLL_PAUSE_MS = 120_000;
const BACKOFF_FACTOR = 1.5;
/** How often a waiting create says where it stands in the engine's output. */
const PROGRESS_EVERY_MS = 60_000;

/** Writes one line into the engine's output, attached to a resource. */
type ProgressLog = (line: string) => void;

/** The parts of @pulumi/pulumi's generated engine protocol code used here. */
interface LogRequestMessage {
  setSeverity(severity: number): void;
  setMessage(message: string): void;
  setUrn(urn: string): void;
}

interface EngineConnection {
  address: string;
  client: { log(request: LogRequestMessage, done: (error: Error | null) => void): void };
  LogRequest: new () => LogRequestMessage;
}

/** `LogSeverity.INFO` of the engine protocol. */
const INFO_SEVERITY = 1;

let engineConnection: EngineConnection | undefined;

/**
 * The dynamic provider process of @pulumi/pulumi gets the engine's address
 * as its one argument, but neither the resource's URN nor an engine
 * connection for `pulumi.log` (which falls back to printing on the process's
 * stdout; the engine shows that unattributed, on the stack). So progress goes
 * to the engine's Log call directly, with the URN the resource class
 * computed; outside the engine (tests, scripts) it is printed.
 */
function progressLog(urn: string | undefined): ProgressLog {
  const address = process.argv[2] ?? "";
  const inEngine = /dynamic-provider/.test(process.argv[1] ?? "") && /^[\w.[\]:-]+:\d+$/.test(address);
  if (!urn || !inEngine) return (line) => console.log(line);
  if (engineConnection?.address !== address) {
    const fromPulumi = createRequire(require.resolve("@pulumi/pulumi"));
    const grpc = fromPulumi("@grpc/grpc-js");
    const { EngineClient } = fromPulumi("./proto/engine_grpc_pb");
    const { LogRequest } = fromPulumi("./proto/engine_pb");
    engineConnection = { address, client: new EngineClient(address, grpc.credentials.createInsecure()), LogRequest };
  }
  const { client, LogRequest } = engineConnection;
  return (line) => {
    const request = new LogRequest();
    request.setSeverity(INFO_SEVERITY);
    request.setMessage(line);
    request.setUrn(urn);
    client.log(request, (error) => {
      if (error) console.log(line);
    });
  };
}

const DOMAIN_ID = /^[^/]+\/[^/]+$/;

export const DomainVerificationInputs = z
  .object({
    /** The Domain's resource id, `<organizationId>/<domain>`; or give `organizationId` and `domain`. */
    domainId: z
      .string()
      .regex(DOMAIN_ID, { message: 'must be a Domain resource id, "<organizationId>/<domain>"' })
      .optional(),
    organizationId: z.string().min(1, { message: "must be an organisation id" }).optional(),
    domain: DomainName.optional(),
    /** The published record's value; when it changes, the wait runs again. */
    recordValue: z.string().optional(),
    timeout: Duration("1s", "24h").default(DEFAULT_TIMEOUT),
    pollInterval: Duration("1s", "10m").default(DEFAULT_POLL_INTERVAL),
    /** The resource's URN, which the class passes so progress shows on the resource in the engine's output. */
    progressUrn: z.string().optional(),
  })
  .superRefine((inputs, context) => {
    if (inputs.domainId !== undefined && (inputs.organizationId !== undefined || inputs.domain !== undefined)) {
      context.addIssue({
        code: "custom",
        path: ["domainId"],
        message: "names the domain already: give either domainId or organizationId and domain, not both",
      });
      return;
    }
    if (inputs.domainId !== undefined) return;
    for (const key of ["organizationId", "domain"] as const) {
      if (inputs[key] === undefined) {
        context.addIssue({
          code: "custom",
          path: [key],
          message: "is required unless domainId (the Domain's resource id) is given",
        });
      }
    }
  });
export type DomainVerificationInputs = z.infer<typeof DomainVerificationInputs>;

export interface DomainVerificationOutputs extends DomainVerificationInputs {
  organizationId: string;
  domain: string;
  /** Whether the service reports the domain verified; refreshed on read. */
  verified: boolean;
  /** The DMARC policy the service read from the record: none, quarantine, reject, missing or invalid. */
  policy: string;
}

function target(inputs: DomainVerificationInputs): { organizationId: string; domain: string } {
  if (inputs.domainId !== undefined) {
    const { organizationId, child } = splitId(inputs.domainId, "Domain", "domain");
    return { organizationId, domain: child };
  }
  return { organizationId: inputs.organizationId ?? "", domain: inputs.domain ?? "" };
}

/** What one read of the domain says. */
type Observation =
  | { state: "verified"; found: DomainRecord }
  | { state: "waiting"; seen: string }
  | { state: "rejected"; seen: string };

function observe(domain: string, found: DomainRecord): Observation {
  const host = `_dmarc.${domain}`;
  if (found.domainVerified) return { state: "verified", found };
  if (found.policy === "missing") return { state: "waiting", seen: `no DMARC record at ${host} seen yet` };
  // The service verifies a record carrying its rua address (spec), so a record
  // it read a valid policy from, yet did not verify, lacks that address.
  const seen =
    found.policy === "invalid"
      ? `the record at ${host} is not one valid DMARC record (several records, or no valid p= policy)`
      : `a DMARC record at ${host} (p=${found.policy}) without the service's rua=mailto address`;
  return { state: "rejected", seen };
}

/** Failures worth waiting through: the service or the network is down for a while. */
function isPassingTrouble(error: unknown): boolean {
  return (
    error instanceof DmarcTransportError ||
    error instanceof OutcomeUnknownError ||
    (error instanceof DmarcApiError && (error.status >= 500 || error.status === 429))
  );
}

/**
 * The service's own words for the latest failed verification: the newest
 * `domain.verified` event about the domain among the deliveries of the
 * organisation's and the partner's webhooks. Undefined when there are none.
 */
async function serviceReason(
  client: DmarcClient,
  settings: ProviderSettings,
  organizationId: string,
  domain: string,
): Promise<string | undefined> {
  const owners = [organizationId, ...(settings.partnerId ? [settings.partnerId] : [])];
  const hooks = (await Promise.all(owners.map((owner) => client.listWebhooks(owner)))).flat();
  const deliveries = (
    await Promise.all(
      hooks
        .filter((hook) => hook.events.includes("domain.verified"))
        .map((hook) => client.listDeliveries(hook.objectId)),
    )
  ).flat();
  const newest = deliveries
    .map((delivery) => ({ at: delivery.createdAt, event: DomainVerifiedEvent.safeParse(delivery.payload) }))
    .filter(({ event }) => event.success && event.data.data.domain === domain)
    .sort((a, b) => Date.parse(b.at) - Date.parse(a.at))[0];
  const data = newest?.event.data?.data;
  return data?.verificationStatus === "failed" ? data.reason : undefined;
}

interface WaitPlan {
  organizationId: string;
  domain: string;
  timeoutMs: number;
  timeoutText: string;
  pollMs: number;
  log: ProgressLog;
}

/**
 * Reads the domain until the service verifies it. A rejection must be seen on
 * two reads in a row: the first may still be the verdict on a record that was
 * replaced just before the wait began.
 */
async function waitForVerification(
  client: DmarcClient,
  settings: ProviderSettings,
  plan: WaitPlan,
): Promise<DomainRecord> {
  const { organizationId, domain } = plan;
  const started = Date.now();
  const deadline = started + plan.timeoutMs;
  let pause = plan.pollMs;
  let nextProgress = started + PROGRESS_EVERY_MS;
  let lastSeen = "nothing yet";
  let rejectedBefore = false;
  let announced = false;
  for (;;) {
    let observation: Observation | undefined;
    try {
      const found = await client.getDomain(organizationId, domain);
      if (!found) {
        throw new Error(
          `DomainVerification: domain ${domain} is not in organisation ${organizationId}. Declare the Domain before its verification (pass the Domain's id as domainId) and run pulumi up again.`,
        );
      }
      observation = observe(domain, found);
    } catch (error) {
      if (!isPassingTrouble(error)) throw error;
      lastSeen = `the service could not be read: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`;
    }
    if (observation?.state === "verified") return observation.found;
    if (observation) lastSeen = observation.seen;
    if (observation?.state === "rejected") {
      if (rejectedBefore) {
        const reason =
          (await serviceReason(client, settings, organizationId, domain).catch(() => undefined)) ?? lastSeen;
        throw new Error(
          `DomainVerification: the service did not verify ${domain}: ${reason}. Publish the Domain's setupRecord.value at _dmarc.${domain} exactly as given (it carries the service's rua=mailto address), then run pulumi up again.`,
        );
      }
      rejectedBefore = true;
    } else rejectedBefore = false;

    const now = Date.now();
    if (now >= deadline) {
      throw new Error(
        `DomainVerification: ${domain} was not verified within ${plan.timeoutText} (waited ${describeDuration(now - started)}); last seen: ${lastSeen}. Check that the DNS record publishes the Domain's setupRecord.value; DNS propagation can take hours, so run pulumi up again to keep waiting (nothing is redone), or raise timeout.`,
      );
    }
    if (!announced) {
      announced = true;
      plan.log(
        `DomainVerification ${domain}: waiting for the service to verify it (timeout ${plan.timeoutText}); ${lastSeen}`,
      );
    } else if (now >= nextProgress) {
      nextProgress = now + PROGRESS_EVERY_MS;
      plan.log(
        `DomainVerification ${domain}: waited ${describeDuration(now - started)} of ${plan.timeoutText}; last seen: ${lastSeen}`,
      );
    }
    await sleep(Math.min(pause, deadline - now));
    pause = Math.min(pause * BACKOFF_FACTOR, Math.max(plan.pollMs, MAX_POLL_PAUSE_MS));
  }
}

async function verifiedOutputs(
  client: DmarcClient,
  settings: ProviderSettings,
  inputs: DomainVerificationInputs,
): Promise<DomainVerificationOutputs> {
  const { organizationId, domain } = target(inputs);
  const found = await waitForVerification(client, settings, {
    organizationId,
    domain,
    timeoutMs: parseDuration(inputs.timeout) ?? 0,
    timeoutText: inputs.timeout,
    pollMs: parseDuration(inputs.pollInterval) ?? 0,
    log: progressLog(inputs.progressUrn),
  });
  return { ...inputs, organizationId, domain, verified: true, policy: found.policy };
}

export const domainVerification: ResourceDefinition<DomainVerificationInputs, DomainVerificationOutputs> = {
  typeName: "DomainVerification",
  inputs: DomainVerificationInputs,
  replaceOn: ["organizationId", "domain"],

  // The Domain's id is split into organisation and domain here, so the
  // recorded inputs name the domain one way whichever way it was declared.
  withDefaults(declared) {
    const { domainId, ...rest } = declared;
    const alsoNamed = rest.organizationId !== undefined || rest.domain !== undefined;
    if (typeof domainId !== "string" || !DOMAIN_ID.test(domainId) || alsoNamed) return declared;
    const { organizationId, domain } = target({ domainId, timeout: "", pollInterval: "" });
    return { ...rest, organizationId, domain };
  },

  async create({ client, settings }, inputs) {
    const outs = await verifiedOutputs(client, settings, inputs);
    return { id: joinId(outs.organizationId, outs.domain), outs };
  },

  async read({ client }, id, props) {
    const { organizationId, child: domain } = splitId(id, "DomainVerification", "domain");
    const found = await client.getDomain(organizationId, domain);
    if (!found) return undefined;
    const inputs = {
      organizationId,
      domain,
      timeout: props?.timeout ?? DEFAULT_TIMEOUT,
      pollInterval: props?.pollInterval ?? DEFAULT_POLL_INTERVAL,
      ...(props?.recordValue !== undefined ? { recordValue: props.recordValue } : {}),
      ...(props?.progressUrn !== undefined ? { progressUrn: props.progressUrn } : {}),
    };
    return { outs: { ...inputs, verified: found.domainVerified, policy: found.policy } };
  },

  async update({ client, settings }, _id, olds, news) {
    if (olds.verified && olds.recordValue === news.recordValue) return { ...olds, ...news };
    return verifiedOutputs(client, settings, news);
  },

  // The verification is a wait, not an object of the service: nothing to remove.
  async delete() {},
};

export interface DomainVerificationArgs {
  /** The Domain's resource id, `<organizationId>/<domain>` (`domain.id`); or give `organizationId` and `domain`. */
  domainId?: pulumi.Input<string>;
  /** The domain's organisation, with `domain`, instead of `domainId`. A different one replaces the verification. */
  organizationId?: pulumi.Input<string>;
  /** The domain name, with `organizationId`, instead of `domainId`. A different one replaces the verification. */
  domain?: pulumi.Input<string>;
  /**
   * The value the DNS record publishes, taken from the DNS record resource
   * (e.g. `cloudflare.DnsRecord.content`), so the verification comes after
   * the record and waits again when the value changes.
   */
  recordValue?: pulumi.Input<string>;
  /**
   * How long `create` waits for the service, as "45m", "2h", "1h30m" or
   * "90s" (1s to 24h). Default "45m". On timeout a rerun of `up` waits again.
   */
  timeout?: pulumi.Input<string>;
  /** First pause between reads of the domain, "15s" by default (1s to 10m); pauses grow by half up to 2 minutes. */
  pollInterval?: pulumi.Input<string>;
}

/**
 * Completes when the service has verified the domain's published DMARC
 * record; fails with the service's reason, or after `timeout`. Place it after
 * the DNS record resource. Deleting it changes nothing on the service.
 * Resource id: `<organizationId>/<domain>`.
 */
export class DomainVerification extends DmarcResource {
  declare readonly organizationId: pulumi.Output<string>;
  declare readonly domain: pulumi.Output<string>;
  declare readonly recordValue: pulumi.Output<string | undefined>;
  declare readonly timeout: pulumi.Output<string>;
  declare readonly pollInterval: pulumi.Output<string>;
  /** True once created; a refresh reads the service's current status. */
  declare readonly verified: pulumi.Output<boolean>;
  /** The DMARC policy the service read from the record. */
  declare readonly policy: pulumi.Output<string>;

  constructor(name: string, args: DomainVerificationArgs, opts?: pulumi.CustomResourceOptions) {
    const props = {
      ...args,
      organizationId: args.organizationId,
      domain: args.domain,
      progressUrn: pulumi.createUrn(name, `pulumi-nodejs:dynamic/${TYPE_MODULE}:DomainVerification`, opts?.parent),
      verified: undefined,
      policy: undefined,
    };
    super("DomainVerification", name, props, opts);
  }
}
