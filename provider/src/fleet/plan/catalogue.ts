import type { Plan } from "../../api";
import { checkPlans } from "../../inventory/declare";
import { clientFrom } from "../../runtime/config";
import { type FleetOptions, settingsOf } from "../fleetOptions";

/**
 * The partner's catalogue, read once for every shard, and checked: an
 * inventory naming plans it cannot price is refused before any shard runs.
 * Handed to the shards' programs, so they send no request of their own.
 */
export async function checkedCatalogue(options: FleetOptions): Promise<Plan[] | undefined> {
  if (options.inventory.tenants.length === 0) return undefined;
  const plans = await clientFrom(settingsOf(options)).listPlans();
  checkPlans(options.inventory, plans);
  return plans;
}
