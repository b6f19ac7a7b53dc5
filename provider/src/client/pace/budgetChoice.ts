import { type BudgetStore, isPostgresUrl } from "./budgetStore";
import { MachineBudget } from "./machineBudget";
import { PostgresBudget } from "./postgresBudget";

export { machineBudgetFolder } from "./machineBudget";

// Which store a process books in, one per place and partner.

/** What a budget is chosen from: the setting and the partner. */
export interface BudgetChoice {
  /**
   * The `budgetStore` setting: a postgres:// URL, "machine" (or
   * "machine:<folder>"), "off", or "auto" (unset): this machine's, unless
   * the layer that knows the state backend put a PostgreSQL one's URL here.
   */
  setting: string | undefined;
  partner: string;
}

const stores = new Map<string, BudgetStore>();

/**
 * The store a run books its turns in, one per place and partner in a
 * process; undefined when switched off.
 */
export function budgetStoreFor({ setting = "auto", partner }: BudgetChoice): BudgetStore | undefined {
  if (setting === "off") return undefined;
  const key = `${setting}\n${partner}`;
  let store = stores.get(key);
  if (store === undefined) {
    store = isPostgresUrl(setting)
      ? new PostgresBudget(setting, partner)
      : new MachineBudget(setting.startsWith("machine:") ? setting.slice("machine:".length) : undefined, partner);
    stores.set(key, store);
  }
  return store;
}

/** Closes every store this process opened (end of a process, or between tests). */
export async function closeBudgetStores(): Promise<void> {
  const open = [...stores.values()];
  stores.clear();
  await Promise.all(open.map((store) => store.close()));
}
