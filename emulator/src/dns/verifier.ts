import type { Logger } from "pino";
import type { VerificationStatus } from "pulumi-dmarc-partner/api";
import type { Dispatcher } from "../delivery";
import { type DomainRecord, domainKey, type Store } from "../store";
import { dmarcHost, judge, type Verdict } from "./dmarc";
import { lookupTxt } from "./lookup";

export interface VerifierOptions {
  /** "host:port" of the DNS server every lookup goes to. */
  resolver: string;
  checkIntervalMs: number;
  windowMs: number;
  /** The word a successful verification is reported with: the profile's. */
  verifiedStatus: string;
  log: Logger;
}

export interface VerificationResult {
  verificationStatus: VerificationStatus;
  reason?: string;
}

export type Observation = Verdict | { status: "error"; reason: string };

function describeDuration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1_000)} seconds`;
  return `${Math.round(ms / 60_000)} minutes`;
}

/**
 * Decides domain verification from DNS data: periodic checks of every domain
 * still waiting, inside a window that starts when the domain is added, plus
 * checks on demand from the control plane.
 */
export class Verifier {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly dispatcher: Dispatcher,
    private readonly options: VerifierOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      // A slow resolver must not pile up overlapping rounds.
      this.round ??= this.checkWaiting().finally(() => {
        this.round = undefined;
      });
    }, this.options.checkIntervalMs);
  }

  /** Stops checking; waits for at most the lookup in flight, not the rest of the round. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.round;
  }

  /** Looks the record up now and always reports the outcome as a domain.verified event. */
  async verifyNow(domain: DomainRecord): Promise<VerificationResult> {
    const observation = await this.observe(domain);
    if (observation.status === "success") return this.succeed(domain, observation.policy);
    if (observation.status !== "error")
      domain.policy = observation.status === "failed" ? observation.policy : "missing";
    return this.fail(domain, observation.reason);
  }

  /** What `_dmarc.<domain>` serves now, judged as verification judges it; changes nothing. */
  async observe(domain: DomainRecord): Promise<Observation> {
    const lookup = await lookupTxt(this.options.resolver, dmarcHost(domain.domain));
    if (lookup.kind === "error") return { status: "error", reason: lookup.message };
    return judge(lookup.kind === "records" ? lookup.records : [], domain.domain, domain.organizationId);
  }

  private async checkWaiting(): Promise<void> {
    const waiting = [...this.store.domains.values()].filter((domain) => !domain.verification.finished);
    for (const domain of waiting) {
      if (this.closed) return;
      // The domain may have been deleted while an earlier lookup was running.
      if (this.store.domains.get(domainKey(domain.organizationId, domain.domain)) === domain) {
        await this.checkPeriodically(domain);
      }
    }
  }

  private async checkPeriodically(domain: DomainRecord): Promise<void> {
    const observation = await this.observe(domain);
    switch (observation.status) {
      case "success":
        this.succeed(domain, observation.policy);
        return;
      case "failed":
        domain.policy = observation.policy;
        // A wrong record is reported once; checks go on in case it is corrected inside the window.
        if (domain.verification.lastFailure !== observation.reason) this.fail(domain, observation.reason);
        break;
      case "absent":
        domain.policy = "missing";
        break;
      case "error":
        this.options.log.warn({ domain: domain.domain, reason: observation.reason }, "DNS check failed");
        break;
    }
    if (Date.now() - Date.parse(domain.verification.startedAt) >= this.options.windowMs) {
      domain.verification.finished = true;
      if (domain.verification.lastFailure === null) {
        const window = describeDuration(this.options.windowMs);
        this.fail(domain, `no DMARC record found at ${dmarcHost(domain.domain)} within ${window}`);
      }
      this.store.changed();
    }
  }

  private succeed(domain: DomainRecord, policy: DomainRecord["policy"]): VerificationResult {
    Object.assign(domain, { policy, domainVerified: true, updatedAt: new Date().toISOString() });
    Object.assign(domain.verification, { finished: true, lastFailure: null });
    this.store.changed();
    this.dispatcher.emit(domain.partnerId, domain.organizationId, {
      eventName: "domain.verified",
      data: { domain: domain.domain, verificationStatus: this.options.verifiedStatus },
    });
    return { verificationStatus: this.options.verifiedStatus };
  }

  private fail(domain: DomainRecord, reason: string): VerificationResult {
    Object.assign(domain, { domainVerified: false, updatedAt: new Date().toISOString() });
    domain.verification.lastFailure = reason;
    this.store.changed();
    this.dispatcher.emit(domain.partnerId, domain.organizationId, {
      eventName: "domain.verified",
      data: { domain: domain.domain, verificationStatus: "failed", reason },
    });
    return { verificationStatus: "failed", reason };
  }
}
