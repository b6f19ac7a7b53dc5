export declare const projectRoot: string;
export declare function pinnedPulumiVersion(): string;
export declare function ensureEngine(): Promise<{ version: string; source: string; env: Record<string, string> }>;
