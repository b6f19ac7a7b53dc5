import type { Plan } from "../../api";
import { checkPlans } from "../../inventory/declare";
import type { Inventory } from "../../inventory/inventory";
import { clientFrom, type ProviderSettings } from "../../runtime/config";

/**
 * The partner's catalogue, read once for every shard, and checked: an
 * inventory naming plans it cannot price is refused before any shard runs.
 * Handed to the shards' programs, so they send no request of their own.
 */
export async function checkedCatalogue(settings: ProviderSettings, inventory: Inventory): Promise<Plan[] | undefined> {
  if (inventory.tenants.length === 0) return undefined;
  const plans = await clientFrom(settings).listPlans();
  checkPlans(inventory, plans);
  return plans;
}
