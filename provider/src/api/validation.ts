import { z } from "zod";

// Shared syntax rules, used by the wire schemas, the emulator and the
// resources' input checks so every layer refuses the same values.

const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TOP_LEVEL_LABEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** A registrable DNS name such as `example.com` or `mail.example.co.uk`: lower case, no trailing dot. */
export function isDomainName(value: string): boolean {
  if (value.length === 0 || value.length > 253 || value !== value.toLowerCase()) return false;
  const labels = value.split(".");
  if (labels.length < 2) return false;
  const topLevel = labels[labels.length - 1] ?? "";
  return labels.every((label) => DOMAIN_LABEL.test(label)) && TOP_LEVEL_LABEL.test(topLevel);
}

export const DomainName = z.string().refine(isDomainName, {
  message: "must be a lower-case domain name such as example.com (letters, digits and hyphens, no trailing dot)",
});

export const Email = z.email({ message: "must be an e-mail address such as admin@example.com" });

export const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

export function isLoopbackHost(hostname: string): boolean {
  return (
    LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) || hostname.endsWith(".localhost")
  );
}

/** Webhook endpoints must use https; plain http is allowed for loopback hosts only (local receivers). */
export function isAllowedWebhookUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && isLoopbackHost(url.hostname);
}

export const WebhookUrl = z.string().refine(isAllowedWebhookUrl, {
  message: "must be an https:// URL (plain http:// only for loopback hosts such as 127.0.0.1)",
});
