import { isLoopbackHost } from "../api";
import {
  type ClientOptions,
  ClientOptionsSchema,
  createClient,
  type DmarcClient,
  describeIssues,
  isPostgresUrl,
  proxyProblemFor,
  RemoteTurns,
  takeTurnsFrom,
} from "../client";
import { DmarcConfigError } from "../client/errors";

// The one way from a stack's configuration to a client: the provider host,
// the program's own calls, the fleet, recovery and import all read the
// `dmarc:*` keys (then the DMARC_* environment) with {@link settingsFrom}
// and make their client with {@link clientFrom}.

/**
 * A stack's configuration, looked up by full key (`dmarc:baseUrl`): the
 * engine's `configure` request, the Automation API's config map, or the
 * config `pulumi config` shows.
 */
export type StackConfig = (key: string) => string | undefined;

export const CONFIG_NAMESPACE = "dmarc";

/**
 * How each `dmarc:*` key's text is read. The keys are the client options
 * (validated and defaulted by {@link ClientOptionsSchema}, so configuration
 * and client can never disagree) plus `partnerId`; the compiler insists that
 * every client option is listed.
 */
const SETTING_KINDS = {
  baseUrl: "text",
  accessToken: "secret",
  clientId: "text",
  clientSecret: "secret",
  partnerId: "text",
  requestsPerMinute: "number",
  requestsPerSecond: "number",
  maxConcurrency: "number",
  rateLimitWindowSeconds: "number",
  budgetStore: "text",
  maxAttempts: "number",
  maxRetryElapsedMs: "number",
  requestTimeoutMs: "number",
  connectTimeoutMs: "number",
  retryBaseDelayMs: "number",
  retryMaxDelayMs: "number",
  tokenRenewMarginSeconds: "number",
  domainBatchWindowMs: "number",
  httpsProxy: "secret",
  noProxy: "text",
  caFile: "text",
} as const satisfies Record<Exclude<keyof ClientOptions, "log" | "notice"> | "partnerId", "text" | "secret" | "number">;

export type SettingKey = keyof typeof SETTING_KINDS;

export type ProviderSettings = Partial<Record<SettingKey, string>>;

/** Every setting with its config key, environment variable and whether it is a secret. */
export const SETTINGS = Object.entries(SETTING_KINDS).map(([key, kind]) => ({
  key: key as SettingKey,
  /** `DMARC_` and the key in upper snake case, e.g. `maxRetryElapsedMs` → `DMARC_MAX_RETRY_ELAPSED_MS`. */
  env: `DMARC_${key.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}`,
  secret: kind === "secret",
}));

const PARTNER_ID = /^[^\s/]+$/;

/** What `dmarc:partnerId` is, for the plugin's schema (the other settings' descriptions are the client options'). */
export const PARTNER_ID_DESCRIPTION =
  "The partner id the service issued: the owner of the partner's own webhooks when a Webhook names none.";
const CREDENTIAL_KEYS = ["clientId", "clientSecret", "accessToken"];

/** The key of a setting in the stack's config: `dmarc:baseUrl` for `baseUrl`. */
export function configKey(key: SettingKey): string {
  return `${CONFIG_NAMESPACE}:${key}`;
}

/** Every setting from the stack's config, falling back to the environment. */
export function settingsFrom(config: StackConfig, env: NodeJS.ProcessEnv = process.env): ProviderSettings {
  const settings: ProviderSettings = {};
  for (const spec of SETTINGS) {
    const value = config(configKey(spec.key)) ?? env[spec.env];
    if (value !== undefined && value !== "") settings[spec.key] = value;
  }
  return settings;
}

/** A `dmarc:*` key as messages name it: the key, and the environment variable read when it is not set. */
function settingName(key: string): string {
  const spec = SETTINGS.find((candidate) => candidate.key === key);
  return spec ? `${configKey(spec.key)} (environment variable ${spec.env})` : key;
}

/**
 * Turns settings into client options, validated by the client's own schema;
 * every problem names the \`dmarc:\` key and its environment variable, and the
 * value given (never a secret's).
 */
export function clientOptionsFrom(settings: ProviderSettings): ClientOptions {
  const options: Record<string, unknown> = {};
  for (const spec of SETTINGS) {
    const raw = settings[spec.key];
    if (raw === undefined || spec.key === "partnerId") continue;
    options[spec.key] = SETTING_KINDS[spec.key] === "number" && raw.trim() !== "" ? Number(raw) : raw;
  }
  const parsed = ClientOptionsSchema.safeParse(options);
  const issues = parsed.success ? [] : parsed.error.issues;
  const problems = describeIssues(issues, settingName, (key) =>
    SETTING_KINDS[key as SettingKey] === "secret" ? undefined : settings[key as SettingKey],
  );
  const keys = issues.flatMap((issue) => (issue.path.length > 0 ? [String(issue.path[0])] : CREDENTIAL_KEYS));
  if (settings.partnerId !== undefined && !PARTNER_ID.test(settings.partnerId)) {
    problems.push(
      `${settingName("partnerId")} must be the partner id the service issued (no spaces or "/"); got ${JSON.stringify(settings.partnerId)}.`,
    );
    keys.push("partnerId");
  }
  if (problems.length > 0) {
    const commands = [...new Set(keys)].map((key) => {
      const secret = SETTING_KINDS[key as SettingKey] === "secret" ? " --secret" : "";
      return `\`pulumi config set${secret} ${CONFIG_NAMESPACE}:${key} <value>\``;
    });
    throw new DmarcConfigError(
      `The DMARC provider's settings cannot be used: ${problems.join(" ")} Set them with ${commands.join(", ")} or the environment variables named.`,
    );
  }
  const proxyProblem = proxyProblemFor(options as ClientOptions);
  if (proxyProblem !== undefined) {
    throw new DmarcConfigError(
      `The DMARC provider's settings cannot be used: ${proxyProblem} Correct the variable, or set \`pulumi config set --secret ${CONFIG_NAMESPACE}:httpsProxy <value>\` (or ${CONFIG_NAMESPACE}:noProxy) for this stack.`,
    );
  }
  return options as ClientOptions;
}

/**
 * Where a process finds the pacer it shares with others (a fleet runner's,
 * for its shards' providers): in the environment only, never the stack's
 * configuration, which is saved; the token lets nothing else take turns.
 */
export const PACER_ENV = { url: "DMARC_PACER_URL", token: "DMARC_PACER_TOKEN" } as const;

let joinedPacer: string | undefined;

/** A process given a pacer on this machine takes every request's turn from it, from its first client on. */
function joinPacerOf(env: NodeJS.ProcessEnv): void {
  const url = env[PACER_ENV.url];
  const token = env[PACER_ENV.token];
  if (!url || !token || joinedPacer === url) return;
  if (!URL.canParse(url) || !isLoopbackHost(new URL(url).hostname)) return;
  joinedPacer = url;
  takeTurnsFrom(new RemoteTurns({ url, token }), `the pacer every shard of the fleet shares`);
}

/**
 * The budget store "auto" stands for, where the state backend is known: a
 * PostgreSQL backend's database, which every job of a CI matrix reaches
 * already; otherwise the setting stays as it is ("auto" is this machine's).
 */
export function withStateBackendBudget(settings: ProviderSettings, backendUrl: string | undefined): ProviderSettings {
  const store = settings.budgetStore ?? "auto";
  return store === "auto" && isPostgresUrl(backendUrl) ? { ...settings, budgetStore: backendUrl } : settings;
}

/**
 * The client of these settings; clients of the same options share
 * connections, tokens, pacing and list reads, and a process started with a
 * shared pacer ({@link PACER_ENV}) paces by it, its own rate the fallback.
 * `log` receives the client's line per attempt, for a caller that counts its requests.
 */
export function clientFrom(
  settings: ProviderSettings,
  { log, env = process.env }: { log?: (line: string) => void; env?: NodeJS.ProcessEnv } = {},
): DmarcClient {
  const shared = withStateBackendBudget(settings, env.PULUMI_BACKEND_URL);
  const client = createClient({ ...clientOptionsFrom(shared), ...(log ? { log } : {}) });
  joinPacerOf(env);
  return client;
}
