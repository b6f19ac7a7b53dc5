import { z } from "zod";
import { Email, isAllowedWebhookUrl } from "../api";

// Field schemas shared by the resources' and functions' inputs. They refuse
// what the wire schemas let through but no declaration means: blank names,
// ids that would break our `<organizationId>/<child>` resource ids, links to
// other schemes than https. Each message says what is allowed.

/** An id the service issued: no white space, and no `/`, which separates the parts of our resource ids. */
export function serviceId(what: string, example: string) {
  return z.string().regex(/^[^\s/]+$/, { message: `must be ${what} such as ${example} (no spaces or "/")` });
}

export const OrganizationId = serviceId("an organisation id", "org_2f8a");

/**
 * A domain group, by its `groupId` or by its DomainGroup's resource id
 * (`<organizationId>/<groupId>`, which the code `pulumi import` writes names
 * by reference): taken as the `groupId`.
 */
export const GroupId = z
  .string()
  .regex(/^[^\s/]+(\/[^\s/]+)?$/, {
    message:
      'must be a domain group id such as grp_91c3, or a DomainGroup\'s id such as org_2f8a/grp_91c3 (no spaces, one "/" at most)',
  })
  .transform((value) => value.slice(value.indexOf("/") + 1));

/** A name shown to people: the wire schema's rules, and not blank or padded with white space. */
export function displayName<S extends z.ZodString>(wire: S) {
  return wire
    .refine((value) => value.trim() !== "", { message: "must not be blank" })
    .refine((value) => value.trim() === value, { message: "must not start or end with white space" });
}

/**
 * E-mail addresses name people, and the service treats them without regard
 * to case: they are compared and sent in lower case, so one person never
 * gets a second invitation.
 */
export const EmailAddress = z
  .string()
  .trim()
  .pipe(Email)
  .transform((value) => value.toLowerCase());

/** Where a person's browser is sent: the same rule as for webhook endpoints. */
export const SecureLink = z.string().refine(isAllowedWebhookUrl, {
  message: "must be an https:// URL such as https://app.example.com/welcome (http:// only for loopback hosts)",
});
