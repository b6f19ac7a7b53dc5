import { promises as dns } from "node:dns";

export type LookupResult =
  | { kind: "records"; records: string[] }
  | { kind: "none" }
  | { kind: "error"; message: string };

/** Per-query resolver timeout; one retry, so a check never hangs for long. */
const QUERY_TIMEOUT_MS = 2_000;
const QUERY_TRIES = 2;

/** Looks TXT records up through one DNS server ("host:port"), joining each record's strings. */
export async function lookupTxt(server: string, name: string): Promise<LookupResult> {
  const resolver = new dns.Resolver({ timeout: QUERY_TIMEOUT_MS, tries: QUERY_TRIES });
  resolver.setServers([server]);
  try {
    const records = await resolver.resolveTxt(name);
    return { kind: "records", records: records.map((chunks) => chunks.join("")) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === dns.NODATA || code === dns.NOTFOUND) return { kind: "none" };
    return { kind: "error", message: `DNS lookup of ${name} failed: ${code ?? (error as Error).message}` };
  }
}
