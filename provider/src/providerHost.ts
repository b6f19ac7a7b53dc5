import { setTimeout as sleep } from "node:timers/promises";
import { closeClients, requestsInFlight, stopSending } from "./client";
import { resourceDefinitions } from "./registry";
import type { ProviderSettings } from "./runtime/config";
import { DynamicProviderHost } from "./runtime/host";

// A provider process outlives its engine when the run is killed (a
// cancelled CI job, a SIGKILL to `pulumi`): nothing it does can be recorded
// any more. Its requests not yet sent are dropped, so that a killed run
// stops spending the partner's budget within a second; those in flight
// finish, and then the process exits, so a runner that is not thrown away
// after each job (a self-hosted one) does not keep it for ever. The
// recovery waits for the same moment before it reads the service: an orphan
// gone by itself counts as stopped.
// Its writes to the engine's closed standard error fail, and Pulumi's
// dynamic provider host reports an unhandled failure by writing again:
// without a handler, an endless loop at full CPU with its memory growing.

/** How often the process looks for its engine. */
const CHECK_INTERVAL_MS = 1_000;

/** The longest an orphan waits for its connections and budget store to close before it exits anyway: nothing is in flight by then. */
const CLOSE_BOUND_MS = 5_000;

/** The processes this guard is for: Pulumi's host of dynamic providers, and this package's provider plugin. */
const PROVIDER_PROCESSES = /[\\/]cmd[\\/]dynamic-provider[\\/]index\.js$|[\\/]dist[\\/]plugin[\\/]main\.js$/;

let guarded = false;

/** In the dynamic provider process: once its engine (the parent that started it) is gone, sends nothing more and exits when its requests in flight have ended. */
function stopWhenEngineGone(argv: readonly string[] = process.argv): void {
  if (guarded || !PROVIDER_PROCESSES.test(argv[1] ?? "")) return;
  guarded = true;
  const engine = process.ppid;
  let stopped = false;
  const watch = setInterval(() => {
    if (process.ppid === engine) return;
    if (!stopped) {
      stopped = true;
      stopSending(new Error("the engine that started this provider process is gone; nothing more is sent"));
    }
    if (requestsInFlight() > 0) return;
    clearInterval(watch);
    void Promise.race([closeClients(), sleep(CLOSE_BOUND_MS)]).finally(() => process.exit(0));
  }, CHECK_INTERVAL_MS);
  watch.unref();
  process.stderr.on("error", () => {});
}

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
