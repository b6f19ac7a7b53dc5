import { resourceDefinitions } from "./registry";
import type { ProviderSettings } from "./runtime/config";
import { stopWhenEngineGone } from "./runtime/engineGone";
import { DynamicProviderHost } from "./runtime/host";

/**
 * The one host of the provider process, which every type's provider module
 * hands its calls to. Its own module, loaded by the provider modules, so that
 * process loads the registry's resources and the client only, not the
 * package's inventory, tenant and fleet parts.
 */
export const dynamicProviderHost = new DynamicProviderHost(Object.values(resourceDefinitions));

stopWhenEngineGone();

/** A host of its own holding these settings, as a shard's configured provider would: import's adoption check. */
export function hostWithSettings(settings: ProviderSettings): DynamicProviderHost {
  return new DynamicProviderHost(Object.values(resourceDefinitions), settings);
}
