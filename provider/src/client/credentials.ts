import { createHash } from "node:crypto";
import type { TokenResponse } from "../api";
import type { Credentials } from "./options";
import { rememberSecret } from "./redaction";

// Where the bearer token of each request comes from. A client-credentials
// token is shared by every client of the same partner and address, renewed
// shortly before it expires, and renewed at once when the service refuses it.

export interface TokenSource {
  /** The token for the next request. */
  current(): Promise<string>;
  /** The service refused `token` (401). Returns whether a fresh token can be obtained. */
  refused(token: string): boolean;
}

export class StaticToken implements TokenSource {
  constructor(private readonly token: string) {
    rememberSecret(token);
  }

  current(): Promise<string> {
    return Promise.resolve(this.token);
  }

  refused(): boolean {
    return false;
  }
}

export class ClientCredentialsToken implements TokenSource {
  private cached: { value: string; renewAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly request: () => Promise<TokenResponse>,
    private readonly renewMarginSeconds: number,
  ) {}

  current(): Promise<string> {
    if (this.cached !== undefined && performance.now() < this.cached.renewAt) return Promise.resolve(this.cached.value);
    // Concurrent callers share one token request.
    this.pending ??= this.renew().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  refused(token: string): boolean {
    // Callers refused together all report the same token; only the first drops it.
    if (this.cached?.value === token) this.cached = undefined;
    return true;
  }

  private async renew(): Promise<string> {
    const requestedAt = performance.now();
    const answer = await this.request();
    rememberSecret(answer.access_token);
    const lifetimeMs = answer.expires_in * 1000;
    // A margin longer than half the lifetime would renew on nearly every call.
    const marginMs = Math.min(this.renewMarginSeconds * 1000, lifetimeMs / 2);
    this.cached = { value: answer.access_token, renewAt: requestedAt + lifetimeMs - marginMs };
    return answer.access_token;
  }
}

/** Identifies a credential without keeping it readable in a cache key. */
export function credentialIdentity(credentials: Credentials): string {
  const digest = (value: string) => createHash("sha256").update(value).digest("hex").slice(0, 32);
  return credentials.kind === "static"
    ? `token:${digest(credentials.accessToken)}`
    : `client:${digest(`${credentials.clientId}\n${credentials.clientSecret}`)}`;
}
