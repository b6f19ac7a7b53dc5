// Everything that ends up in an error message or a log line passes through
// `redact`. Secrets the client has handled (tokens, client secrets, webhook
// secrets, magic links) are remembered process-wide, because an error raised
// by one client may quote a value another client received.

export const REDACTED = "[REDACTED]";

/**
 * Shorter values are too likely to occur in ordinary text to be replaced
 * blindly: those remembered all the same (a proxy's password, of any
 * length) are replaced where they stand alone, not inside a longer word.
 */
const MIN_SECRET_LENGTH = 8;

/** Oldest entries are forgotten first; tokens are renewed every few minutes in a long run. */
const MAX_REMEMBERED_SECRETS = 4096;

const remembered = new Set<string>();
const rememberedShort = new Set<string>();

/** Remembers a secret for {@link redact}; one shorter than 8 characters only when `anyLength` says so. */
export function rememberSecret(value: string | undefined, { anyLength = false } = {}): void {
  if (value === undefined || value === "") return;
  // A secret also travels percent-encoded (form bodies, query strings, JSON-escaped links).
  for (const form of new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)])) {
    if (form.length >= MIN_SECRET_LENGTH) remember(remembered, form);
    else if (anyLength) remember(rememberedShort, form);
  }
}

function remember(set: Set<string>, value: string): void {
  if (set.has(value)) return;
  set.add(value);
  while (set.size > MAX_REMEMBERED_SECRETS) {
    const oldest = set.values().next().value;
    if (oldest === undefined) break;
    set.delete(oldest);
  }
}

const escapedForRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  // A credential has a digit or punctuation, which keeps prose such as "bearer credentials" readable.
  [/\b(Bearer|Basic)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [/\bwhsec_[A-Za-z0-9+/=_-]+/g, `whsec_${REDACTED}`],
  [
    /(["']?\b(?:access_token|refresh_token|client_secret|secret|password|token|signature)\b["']?\s*[:=]\s*["']?)[^"'&\s,;}]+/gi,
    `$1${REDACTED}`,
  ],
];

export function redact(text: string): string {
  let result = text;
  // Longest first, so a secret that contains another is removed whole.
  for (const secret of [...remembered].sort((a, b) => b.length - a.length)) {
    if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  }
  for (const secret of rememberedShort) {
    if (result.includes(secret)) {
      result = result.replace(new RegExp(`(?<![A-Za-z0-9])${escapedForRegExp(secret)}(?![A-Za-z0-9])`, "g"), REDACTED);
    }
  }
  for (const [pattern, replacement] of PATTERNS) result = result.replace(pattern, replacement);
  return result;
}

/** Redacts every string inside a JSON-like value (error details quoted from the service). */
export function redactDeep(value: unknown): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item)]));
  }
  return value;
}
