import { domain } from "./resources/domain";
import { domainGroup } from "./resources/domainGroup";
import { domainVerification } from "./resources/domainVerification";
import { invitation } from "./resources/invitation";
import { organization } from "./resources/organization";
import { subscription } from "./resources/subscription";
import { webhook } from "./resources/webhook";
import { DynamicProviderHost } from "./runtime/host";

/**
 * The host every resource type's provider module hands over to, in the
 * provider process: one per process, so the HTTP pool, token cache and pacing
 * are shared by every resource. Its own module, so that process loads the
 * resources and the client only, not the package's inventory, tenant and
 * fleet parts and their dependencies.
 */
export const dynamicProviderHost = new DynamicProviderHost([
  organization,
  domainGroup,
  domain,
  domainVerification,
  webhook,
  subscription,
  invitation,
]);
