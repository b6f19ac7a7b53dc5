import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { MagicLink } from "../api";
import { EmailAddress, OrganizationId, SecureLink, serviceId } from "../resources/fields";
import { inputFailure } from "../runtime/values";
import { programClient } from "./programClient";

/** What a sign-in link is issued for: the program's function and the plugin's invoke take the same. */
export const MagicLinkInputs = z.object({
  userId: z
    .union([EmailAddress, serviceId("a user id or e-mail address", "alice@example.com")])
    .describe("The invited user's e-mail address (accepted as user id)."),
  organizationId: OrganizationId.describe("The organisation the user signs in to."),
  redirectUri: SecureLink.optional().describe(
    "Where the user lands after signing in: https (http for loopback hosts only). Default: the service's own choice.",
  ),
});

function validInputs(given: Record<keyof MagicLinkArgs, string | undefined>): z.output<typeof MagicLinkInputs> {
  const parsed = MagicLinkInputs.safeParse(given);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => inputFailure("createMagicLink", given, issue).reason);
  throw new Error(problems.join("; "));
}

export interface MagicLinkArgs {
  /** The invited user's e-mail address (accepted as user id). */
  userId: pulumi.Input<string>;
  organizationId: pulumi.Input<string>;
  /** Where the user lands after signing in: https (http for loopback hosts only). Default: the service's own choice. */
  redirectUri?: pulumi.Input<string>;
}

/**
 * Issues a time-bound, single-use sign-in link for an invited user. The
 * result is a Pulumi secret: the link is a credential. It is issued by
 * `pulumi up` only; a preview shows it as unknown instead of spending one.
 */
export function createMagicLink(args: MagicLinkArgs): pulumi.Output<MagicLink> {
  const link = pulumi
    .all([args.userId, args.organizationId, args.redirectUri])
    .apply(async ([userId, organizationId, redirectUri]) => {
      const inputs = validInputs({ userId, organizationId, redirectUri });
      if (inputs.redirectUri === undefined) delete inputs.redirectUri;
      if (pulumi.runtime.isDryRun()) return pulumi.unknown as unknown as MagicLink;
      return (await programClient()).createMagicLink(inputs);
    });
  return pulumi.secret(link);
}
