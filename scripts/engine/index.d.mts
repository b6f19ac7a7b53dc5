export declare function ensureEngine(): Promise<{ version: string; source: string; env: Record<string, string> }>;
