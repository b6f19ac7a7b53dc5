export declare function ensureEngine(
  version?: string,
): Promise<{ version: string; source: string; env: Record<string, string> }>;
