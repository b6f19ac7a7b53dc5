import { randomBytes } from "node:crypto";

/** `<prefix>_<24 hex>`, the observed form of the service's identifiers. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("hex")}`;
}

/** An unguessable URL-safe string for bearer tokens and magic links. */
export function newSecretToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}
