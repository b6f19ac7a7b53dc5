import * as pulumi from "@pulumi/pulumi";
import type { MagicLink } from "../api";
import { programClient } from "./programClient";

export interface MagicLinkArgs {
  /** The invited user's e-mail address (accepted as user id). */
  userId: pulumi.Input<string>;
  organizationId: pulumi.Input<string>;
  /** Where the user lands after signing in. */
  redirectUri: pulumi.Input<string>;
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
      if (pulumi.runtime.isDryRun()) return pulumi.unknown as unknown as MagicLink;
      return (await programClient()).createMagicLink({ userId, organizationId, redirectUri });
    });
  return pulumi.secret(link);
}
