import { type EmulatorOptions, type RunningEmulator, startEmulator } from "dmarc-partner-emulator";
import { createClient, type DmarcClient } from "pulumi-dmarc-partner/client";

export interface EmulatorHandle {
  emulator: RunningEmulator;
  /** The first built-in partner, whose client credentials the provider uses. */
  partner: RunningEmulator["partners"][number];
  /** Stack config pointing the provider at the emulator with client credentials. */
  stackConfig: Record<string, { value: string; secret?: boolean }>;
  /** Environment pointing the provider or a program at the emulator, for code outside a stack. */
  env: Record<string, string>;
  control<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

/** An in-process emulator on a random loopback port. */
export async function startTestEmulator(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  const emulator = await startEmulator({ port: 0, retryScale: 0.001, ...options });
  const partner = emulator.partners[0];
  if (!partner) throw new Error("the emulator started without partners");
  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${emulator.url}/_emulator${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`control ${method} ${path}: ${response.status} ${await response.text()}`);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  };
  return {
    emulator,
    partner,
    control,
    stackConfig: {
      "dmarc:baseUrl": { value: emulator.url },
      "dmarc:clientId": { value: partner.clientId },
      "dmarc:clientSecret": { value: partner.clientSecret, secret: true },
      "dmarc:partnerId": { value: partner.id },
    },
    env: {
      DMARC_BASE_URL: emulator.url,
      DMARC_CLIENT_ID: partner.clientId,
      DMARC_CLIENT_SECRET: partner.clientSecret,
      DMARC_PARTNER_ID: partner.id,
    },
  };
}

/** A client of the emulator's first partner, unpaced: a test's own reads and writes, beside the code under test. */
export function partnerClient(handle: EmulatorHandle): DmarcClient {
  return createClient({
    baseUrl: handle.emulator.url,
    clientId: handle.partner.clientId,
    clientSecret: handle.partner.clientSecret,
    requestsPerMinute: 0,
  });
}
