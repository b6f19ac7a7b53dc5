import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import {
  DomainName,
  DomainPolicy,
  type Domain as DomainRecord,
  DomainVerifiedEvent,
  verificationOutcome,
} from "../api";
import { DmarcApiError, type DmarcClient, DmarcTransportError, OutcomeUnknownError } from "../client";
import type { ProviderSettings } from "../runtime/config";
import type { EngineLog } from "../runtime/engineLog";
import { joinId, splitId } from "../runtime/ids";
import { defineResource, type OutputChange, updateMayChange } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { OrganizationId } from "./fields";

// Waits, in `create`, until the service reports the domain verified: the
// pattern of aws.acm.CertificateValidation.

const UNITS_MS = { h: 3_600_000, m: 60_000, s: 1_000 } as const;
const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** Milliseconds of a duration written like Go's: "45m", "2h", "1h30m", "90s". */
function parseDuration(text: string): number | undefined {
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
const DEFAULT_TIMEOUT = "45m";
/** First pause between two reads of the domain; pauses then grow by half up to {@link MAX_POLL_PAUSE_MS}. */
const DEFAULT_POLL_INTERVAL = "15s";
const MAX_POLL_PAUSE_MS = 120_000;
const BACKOFF_FACTOR = 1.5;
/** How often a waiting create says where it stands in the engine's output. */
const PROGRESS_EVERY_MS = 60_000;

const DOMAIN_ID = /^[^/]+\/[^/]+$/;

const DomainVerificationInputs = z
  .object({
    domainId: z
      .string()
      .regex(DOMAIN_ID, { message: 'must be a Domain resource id, "<organizationId>/<domain>"' })
      .optional()
      .describe(
        "The Domain's resource id, `<organizationId>/<domain>` (`domain.id`); or give `organizationId` and `domain`.",
      ),
    organizationId: OrganizationId.optional().describe(
      "The domain's organisation, with `domain`, instead of `domainId`.",
    ),
    domain: DomainName.optional().describe("The domain name, with `organizationId`, instead of `domainId`."),
    recordValue: z
      .string()
      .optional()
      .describe(
        "The value the DNS record publishes, taken from the DNS record resource (e.g. `cloudflare.DnsRecord.content`), so the verification comes after the record and waits again when the value changes.",
      ),
    timeout: Duration("1s", "24h")
      .describe(
        'How long `create` waits for the service, as "45m", "2h", "1h30m" or "90s" (1s to 24h). On timeout a rerun of `up` waits again.',
      )
      .default(DEFAULT_TIMEOUT),
    pollInterval: Duration("1s", "10m")
      .describe(
        `First pause between reads of the domain (1s to 10m); pauses grow by half up to ${MAX_POLL_PAUSE_MS / 60_000} minutes.`,
      )
      .default(DEFAULT_POLL_INTERVAL),
    progressUrn: z
      .string()
      .optional()
      .describe(
        "Filled by the class with the resource's URN, so progress shows on the resource in the engine's output.",
      ),
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
type DomainVerificationInputs = z.output<typeof DomainVerificationInputs>;

const DomainVerificationOutputs = z.object({
  verified: z
    .boolean()
    .describe(
      "Whether the service reports the domain verified: true once created; a refresh reads the current status.",
    ),
  policy: DomainPolicy.describe("The DMARC policy the service read from the record."),
});
type DomainVerificationProps = DomainVerificationInputs & z.output<typeof DomainVerificationOutputs>;

const targetOfId = (id: string) => {
  const { organizationId, child } = splitId(id, "DomainVerification", "domain");
  return { organizationId, domain: child };
};

function target(inputs: DomainVerificationInputs): { organizationId: string; domain: string } {
  if (inputs.domainId !== undefined) return targetOfId(inputs.domainId);
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
  return data && verificationOutcome(data.verificationStatus) === "failed" ? data.reason : undefined;
}

interface WaitPlan {
  organizationId: string;
  domain: string;
  timeoutMs: number;
  timeoutText: string;
  pollMs: number;
  log: EngineLog;
}

/** One read of the domain: what it shows, or, while the service or the network is down, why it could not be read. */
async function readOnce(
  client: DmarcClient,
  plan: WaitPlan,
): Promise<Observation | { state: "unreadable"; seen: string }> {
  const { organizationId, domain } = plan;
  try {
    const found = await client.getDomain(organizationId, domain);
    if (!found) {
      throw new Error(
        `DomainVerification: domain ${domain} is not in organisation ${organizationId}. Declare the Domain before its verification (pass the Domain's id as domainId) and run pulumi up again.`,
      );
    }
    return observe(domain, found);
  } catch (error) {
    if (!isPassingTrouble(error)) throw error;
    return {
      state: "unreadable",
      seen: `the service could not be read: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
    };
  }
}

/** The wait's lines in the engine's output: one when it begins, then one every {@link PROGRESS_EVERY_MS}. */
function progressNotes(plan: WaitPlan, started: number): (now: number, lastSeen: string) => void {
  let announced = false;
  let nextProgress = started + PROGRESS_EVERY_MS;
  return (now, lastSeen) => {
    if (!announced) {
      announced = true;
      plan.log(
        `DomainVerification ${plan.domain}: waiting for the service to verify it (timeout ${plan.timeoutText}); ${lastSeen}`,
      );
    } else if (now >= nextProgress) {
      nextProgress = now + PROGRESS_EVERY_MS;
      plan.log(
        `DomainVerification ${plan.domain}: waited ${describeDuration(now - started)} of ${plan.timeoutText}; last seen: ${lastSeen}`,
      );
    }
  };
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
  const note = progressNotes(plan, started);
  let pause = plan.pollMs;
  let rejectedBefore = false;
  for (;;) {
    const observation = await readOnce(client, plan);
    if (observation.state === "verified") return observation.found;
    const lastSeen = observation.seen;
    if (observation.state === "rejected") {
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
    note(now, lastSeen);
    await sleep(Math.min(pause, deadline - now));
    pause = Math.min(pause * BACKOFF_FACTOR, Math.max(plan.pollMs, MAX_POLL_PAUSE_MS));
  }
}

async function verifiedProps(
  client: DmarcClient,
  settings: ProviderSettings,
  log: EngineLog,
  inputs: DomainVerificationInputs,
): Promise<DomainVerificationProps> {
  const found = await waitForVerification(client, settings, {
    ...target(inputs),
    timeoutMs: parseDuration(inputs.timeout) ?? 0,
    timeoutText: inputs.timeout,
    pollMs: parseDuration(inputs.pollInterval) ?? 0,
    log,
  });
  return { ...inputs, verified: true, policy: found.policy };
}

/**
 * An update waits for the service again when the record's value changed, or
 * when the last verification did not end verified (a refresh saw the domain
 * unverified): what it records then only the service can tell.
 */
const waitsAgain: OutputChange<typeof DomainVerificationInputs, typeof DomainVerificationOutputs> = {
  changedBy: ["recordValue"],
  alsoWhen: { recorded: "`verified` is false", holds: (olds) => !olds.verified },
};

export const domainVerification = defineResource({
  typeName: "DomainVerification",
  description:
    "Completes when the service has verified the domain's published DMARC record; fails with the service's reason, or after `timeout`. Place it after the DNS record resource that publishes the Domain's `setupRecord`. Nothing is written to the service: destroying it changes nothing there, and a failed or timed-out create can simply run again.",
  idFormat: "<organizationId>/<domain>",
  inputs: DomainVerificationInputs,
  outputs: DomainVerificationOutputs,
  // Known whichever way the domain was named (domainId, or organisation and name).
  idOutputs: {
    organizationId: { description: "The domain's organisation.", fromId: (id) => targetOfId(id).organizationId },
    domain: { description: "The domain name.", fromId: (id) => targetOfId(id).domain },
  },
  urnInput: "progressUrn",
  // Naming the domain another way is harmless to replace: the verification is a wait, not an object.
  updatedBy: { verified: waitsAgain, policy: waitsAgain },
  replaceOn: ["domainId", "organizationId", "domain"],

  // Nothing is created on the service: there is nothing a lost answer could have made.
  ownership: "createTakesIt",
  lookUp: async () => [],

  async create({ client, settings, log }, inputs) {
    const { organizationId, domain } = target(inputs);
    return { id: joinId(organizationId, domain), outs: await verifiedProps(client, settings, log, inputs) };
  },

  async read({ client }, id, props) {
    const { organizationId, domain } = targetOfId(id);
    const found = await client.getDomain(organizationId, domain);
    if (!found) return undefined;
    const named = props?.domainId !== undefined ? { domainId: props.domainId } : { organizationId, domain };
    return {
      ...named,
      timeout: props?.timeout ?? DEFAULT_TIMEOUT,
      pollInterval: props?.pollInterval ?? DEFAULT_POLL_INTERVAL,
      ...(props?.recordValue !== undefined ? { recordValue: props.recordValue } : {}),
      ...(props?.progressUrn !== undefined ? { progressUrn: props.progressUrn } : {}),
      verified: found.domainVerified,
      policy: found.policy,
    };
  },

  async update({ client, settings, log }, _id, olds, news, changed) {
    if (!updateMayChange(waitsAgain, olds, changed)) return { ...olds, ...news };
    return verifiedProps(client, settings, log, news);
  },

  // The verification is a wait, not an object of the service: nothing to remove.
  async delete() {},
});

/** The DomainVerification resource; its inputs, outputs and id: docs/resources/domainVerification.md. */
export const DomainVerification = resourceClass(domainVerification);
export type DomainVerification = InstanceType<typeof DomainVerification>;
export type DomainVerificationArgs = ConstructorParameters<typeof DomainVerification>[1];
