import * as pulumi from "@pulumi/pulumi";
import type { DmarcClient } from "../client";
import { CONFIG_NAMESPACE, clientFrom, configKey, SETTINGS, settingsFrom } from "../runtime/config";

function plainValue<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => {
    output.apply((value) => {
      resolve(value);
      return value;
    });
  });
}

/**
 * The client for calls made by the program itself (plans, magic links), with
 * the same settings the resources use: the stack's `dmarc:*` config, then the
 * environment. Secret keys are read as secrets so Pulumi does not warn.
 */
export async function programClient(): Promise<DmarcClient> {
  const config = new pulumi.Config(CONFIG_NAMESPACE);
  const values = new Map<string, string>();
  for (const spec of SETTINGS) {
    const secret = spec.secret ? config.getSecret(spec.key) : undefined;
    const value = secret ? await plainValue(secret) : config.get(spec.key);
    if (value !== undefined) values.set(configKey(spec.key), value);
  }
  return clientFrom(settingsFrom((key) => values.get(key)));
}
