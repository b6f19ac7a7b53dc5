import { createClient, type DmarcClient } from "../client";
import { CONFIG_NAMESPACE, clientOptionsFrom, readSettings } from "../runtime/config";

/**
 * The client the stack's provider would use: its `dmarc:*` config, then the
 * DMARC_* environment, exactly as the provider reads them.
 */
export function clientFromConfig(config: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv): DmarcClient {
  const settings = readSettings({ get: (key) => config[`${CONFIG_NAMESPACE}:${key}`] }, env);
  return createClient(clientOptionsFrom(settings));
}
