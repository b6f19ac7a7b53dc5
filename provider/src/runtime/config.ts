import type { ClientOptions } from "../client";

/** Where a setting is read from: Pulumi config under the `dmarc` namespace first, then the environment. */
export interface ConfigSource {
  /** Looks up a key of the `dmarc` namespace, e.g. `baseUrl` for `dmarc:baseUrl`. */
  get(key: string): string | undefined;
}

export const CONFIG_NAMESPACE = "dmarc";

interface SettingSpec {
  /** Key under the `dmarc` config namespace. */
  key: string;
  /** Environment variable used when the config key is not set. */
  env: string;
  secret?: boolean;
  kind: "string" | "number";
  description: string;
}

/** Every provider setting, with its config key and environment fallback; defaults live with the client options. */
export const SETTINGS = [
  { key: "baseUrl", env: "DMARC_BASE_URL", kind: "string", description: "base address of the service (no default)" },
  {
    key: "accessToken",
    env: "DMARC_ACCESS_TOKEN",
    kind: "string",
    secret: true,
    description: "static bearer token (or clientId + clientSecret)",
  },
  { key: "clientId", env: "DMARC_CLIENT_ID", kind: "string", description: "OAuth client id for /auth/token" },
  {
    key: "clientSecret",
    env: "DMARC_CLIENT_SECRET",
    kind: "string",
    secret: true,
    description: "OAuth client secret for /auth/token",
  },
  {
    key: "partnerId",
    env: "DMARC_PARTNER_ID",
    kind: "string",
    description: "partner identifier, the default webhook ownerId",
  },
  {
    key: "requestsPerSecond",
    env: "DMARC_REQUESTS_PER_SECOND",
    kind: "number",
    description: "client-side rate limit shared by every call",
  },
  { key: "maxConcurrency", env: "DMARC_MAX_CONCURRENCY", kind: "number", description: "concurrent requests at most" },
  { key: "maxAttempts", env: "DMARC_MAX_ATTEMPTS", kind: "number", description: "tries per call, the first included" },
  {
    key: "maxRetryElapsedMs",
    env: "DMARC_MAX_RETRY_ELAPSED_MS",
    kind: "number",
    description: "time budget for the retries of one call",
  },
  { key: "requestTimeoutMs", env: "DMARC_REQUEST_TIMEOUT_MS", kind: "number", description: "timeout of one request" },
  { key: "connectTimeoutMs", env: "DMARC_CONNECT_TIMEOUT_MS", kind: "number", description: "TCP/TLS connect timeout" },
] as const satisfies readonly SettingSpec[];

export type SettingKey = (typeof SETTINGS)[number]["key"];

export type ProviderSettings = Partial<Record<SettingKey, string>>;

export class ProviderConfigError extends Error {
  override name = "ProviderConfigError";
}

/** Reads every setting from the config source, falling back to the environment. */
export function readSettings(source: ConfigSource, env: NodeJS.ProcessEnv = process.env): ProviderSettings {
  const settings: ProviderSettings = {};
  for (const spec of SETTINGS) {
    const value = source.get(spec.key) ?? env[spec.env];
    if (value !== undefined && value !== "") settings[spec.key] = value;
  }
  return settings;
}

function howToSet(key: SettingKey): string {
  const spec = SETTINGS.find((candidate) => candidate.key === key);
  const secret = spec && "secret" in spec && spec.secret ? " --secret" : "";
  return `\`pulumi config set${secret} ${CONFIG_NAMESPACE}:${key} <value>\` or the environment variable ${spec?.env}`;
}

function numberSetting(settings: ProviderSettings, key: SettingKey): number | undefined {
  const raw = settings[key];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw new ProviderConfigError(`${CONFIG_NAMESPACE}:${key} must be a non-negative number, got "${raw}"`);
  }
  return value;
}

/** Turns settings into client options, failing with the exact key to set when something required is missing. */
export function clientOptionsFrom(settings: ProviderSettings): ClientOptions {
  if (!settings.baseUrl) {
    throw new ProviderConfigError(`No base address for the DMARC service: set ${howToSet("baseUrl")}.`);
  }
  const hasClientCredentials = settings.clientId !== undefined || settings.clientSecret !== undefined;
  if (!settings.accessToken && !hasClientCredentials) {
    throw new ProviderConfigError(
      `No credentials for the DMARC service: set ${howToSet("accessToken")}, or both ${howToSet("clientId")} and ${howToSet("clientSecret")}.`,
    );
  }
  if (!settings.accessToken && hasClientCredentials && (!settings.clientId || !settings.clientSecret)) {
    const missing: SettingKey = settings.clientId ? "clientSecret" : "clientId";
    throw new ProviderConfigError(`Incomplete client credentials for the DMARC service: set ${howToSet(missing)}.`);
  }
  const options: ClientOptions = { baseUrl: settings.baseUrl };
  if (settings.accessToken) options.accessToken = settings.accessToken;
  else {
    options.clientId = settings.clientId;
    options.clientSecret = settings.clientSecret;
  }
  const numeric = [
    "requestsPerSecond",
    "maxConcurrency",
    "maxAttempts",
    "maxRetryElapsedMs",
    "requestTimeoutMs",
    "connectTimeoutMs",
  ] as const;
  for (const key of numeric) {
    const value = numberSetting(settings, key);
    if (value !== undefined) options[key] = value;
  }
  return options;
}
