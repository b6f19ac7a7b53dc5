import type { TokenResponse } from "pulumi-dmarc-partner/api";
import { unauthenticated } from "./errors";
import { newSecretToken } from "./ids";
import type { Partner, PartnerDirectory } from "./partners";
import type { Store } from "./store";

/** Issues client-credentials tokens and resolves bearer tokens to their partner. */
export class Tokens {
  constructor(
    private readonly store: Store,
    private readonly partners: PartnerDirectory,
    private readonly ttlSeconds: number,
  ) {}

  issue(partner: Partner): TokenResponse {
    const now = Date.now();
    for (const [token, record] of this.store.tokens) {
      if (Date.parse(record.expiresAt) <= now) this.store.tokens.delete(token);
    }
    const token = newSecretToken("dmt");
    const expiresAt = new Date(now + this.ttlSeconds * 1000).toISOString();
    this.store.tokens.set(token, { token, partnerId: partner.id, expiresAt });
    return { access_token: token, token_type: "Bearer", expires_in: this.ttlSeconds };
  }

  /** The partner behind an `Authorization` header; refuses with 401 otherwise. */
  authenticate(header: string | undefined): Partner {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    if (!match?.[1]) throw unauthenticated("The Authorization header must carry a bearer token.");
    const token = match[1];
    const staticPartner = this.partners.withStaticToken(token);
    if (staticPartner) return staticPartner;
    const issued = this.store.tokens.get(token);
    const partner = issued && this.partners.get(issued.partnerId);
    if (!issued || !partner) throw unauthenticated("The bearer token is not valid.");
    if (Date.parse(issued.expiresAt) <= Date.now()) throw unauthenticated("The bearer token has expired.");
    return partner;
  }

  /** Every issued token expires now; static partner tokens stay valid. */
  expireIssued(): void {
    const expired = new Date().toISOString();
    for (const record of this.store.tokens.values()) record.expiresAt = expired;
  }
}
