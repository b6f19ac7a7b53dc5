import type { ListMeta } from "pulumi-dmarc-partner/api";
import type { ApiError } from "./errors";

// The service describes itself twice: its guides and its OpenAPI description
// ("EasyDMARC API 1.0.0"). Where they differ, each profile answers as one of
// them, so the client is tested against both. Everything else is the same.

export const PROFILE_NAMES = ["published", "guides"] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** The lists whose meta the two sources spell differently; the organisation list always carries all six fields. */
export type ListFamily = "domains" | "domainGroups" | "webhooks" | "deliveries";

export interface WireProfile {
  name: ProfileName;
  /** The body of a refusal. */
  errorBody(error: ApiError, traceId: string): Record<string, unknown>;
  /** What a list's `meta` carries. */
  listMeta(family: ListFamily, meta: Required<Pick<ListMeta, "total" | "limit" | "page">>): Record<string, unknown>;
  /** `GET /v1/webhooks/owner/{ownerId}` for an owner without webhooks: 404, or 200 with an empty list. */
  ownerWithoutWebhooks: "notFound" | "emptyList";
  /** Whether the create answer of a webhook carries its secret. */
  secretOnCreate: boolean;
  /** `verificationStatus` of a successful `domain.verified` event. */
  verifiedStatus: string;
  /** `expires_in` of issued tokens when the options name none. */
  tokenTtlSeconds: number;
  /** The status of an invalid webhook create or update body: the description lists only 422 there. */
  webhookValidationStatus: 400 | 422;
  /** The status of `POST /auth/token` with wrong credentials. */
  badCredentialsStatus: 400 | 401;
  /** The status for another partner's (or no) organisation on routes scoped by an organisation id. */
  foreignOrganizationStatus: 403 | 404;
  /** An active subscription's `cancelledAt`: null, or left out. */
  activeCancelledAt: "null" | "omitted";
  /** How a subscription item spells its feature keys. */
  itemFeatureKeys: "camelCase" | "snake_case";
}

/** All six meta fields of the guides (and of the organisation list in both sources). */
export function fullMeta(meta: { total: number; limit: number; page: number }): ListMeta {
  const pageCount = Math.ceil(meta.total / meta.limit);
  return { ...meta, pageCount, hasPreviousPage: meta.page > 1, hasNextPage: meta.page < pageCount };
}

/** The guides' envelope: `{ error, message, details, traceId }`, details as the guides list them. */
function guidesErrorBody(error: ApiError, traceId: string): Record<string, unknown> {
  return { error: error.code, message: error.message, details: error.details, traceId };
}

/**
 * The description's `ErrorResponse`: `statusCode` as text, `error`, `traceId`,
 * `timestamp`, and `details` with `message` and the `property` at fault; no
 * top-level `message`, and 422 is `UnprocessableEntity`.
 */
function publishedErrorBody(error: ApiError, traceId: string): Record<string, unknown> {
  const invalidFields = error.details.invalidFields as { field: string }[] | undefined;
  const property = invalidFields?.[0]?.field;
  return {
    statusCode: String(error.status),
    error: error.status === 422 ? "UnprocessableEntity" : error.code,
    traceId,
    timestamp: new Date().toISOString(),
    details: { message: error.message, ...(property === undefined ? {} : { property }) },
  };
}

/** Per list, the meta of the description's examples: all six fields on domains, three on groups. */
const PUBLISHED_LIST_META: Record<ListFamily, (meta: { total: number; limit: number; page: number }) => object> = {
  domains: fullMeta,
  domainGroups: ({ total, limit, page }) => ({ pageSize: limit, page, total }),
  webhooks: ({ total, page }) => ({ page, total }),
  deliveries: ({ total }) => ({ total }),
};

const PROFILES: Record<ProfileName, WireProfile> = {
  published: {
    name: "published",
    errorBody: publishedErrorBody,
    listMeta: (family, meta) => ({ ...PUBLISHED_LIST_META[family](meta) }),
    ownerWithoutWebhooks: "notFound",
    secretOnCreate: false,
    verifiedStatus: "verified",
    tokenTtlSeconds: 300,
    webhookValidationStatus: 422,
    badCredentialsStatus: 400,
    foreignOrganizationStatus: 403,
    activeCancelledAt: "omitted",
    itemFeatureKeys: "snake_case",
  },
  guides: {
    name: "guides",
    errorBody: guidesErrorBody,
    listMeta: (_family, meta) => ({ ...fullMeta(meta) }),
    ownerWithoutWebhooks: "emptyList",
    secretOnCreate: true,
    verifiedStatus: "success",
    tokenTtlSeconds: 3600,
    webhookValidationStatus: 400,
    badCredentialsStatus: 401,
    foreignOrganizationStatus: 404,
    activeCancelledAt: "null",
    itemFeatureKeys: "camelCase",
  },
};

export const PROFILE_ENV = "DMARC_EMULATOR_PROFILE";

/** The profile named by the options, else by the environment, else `published`. */
export function profileNamed(name: string | undefined): WireProfile {
  const chosen = name ?? process.env[PROFILE_ENV] ?? "published";
  const profile = PROFILES[chosen as ProfileName];
  if (!profile) throw new Error(`unknown emulator profile "${chosen}": use ${PROFILE_NAMES.join(" or ")}`);
  return profile;
}

const snakeCase = (key: string) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** Feature keys as the profile spells them on subscription items. */
export function itemFeatures(profile: WireProfile, features: Record<string, unknown>): Record<string, unknown> {
  if (profile.itemFeatureKeys === "camelCase") return { ...features };
  return Object.fromEntries(Object.entries(features).map(([key, value]) => [snakeCase(key), value]));
}
