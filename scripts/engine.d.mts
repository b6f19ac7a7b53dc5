export declare const projectRoot: string;
export declare function pinnedPulumiVersion(): string;
export declare function ensureEngine(): Promise<{ version: string; source: string; env: Record<string, string> }>;
export declare function ensureSdkGenerator(language: "nodejs" | "python" | "go" | "dotnet"): Promise<string>;
export type ExampleLanguage = "nodejs" | "python" | "go" | "dotnet" | "yaml";
export declare function ensureProgramGenerator(language: ExampleLanguage): Promise<string>;
