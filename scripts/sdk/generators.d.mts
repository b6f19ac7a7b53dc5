export type ExampleLanguage = "nodejs" | "python" | "go" | "dotnet" | "yaml";
export declare function ensureSdkGenerator(language: "nodejs" | "python" | "go" | "dotnet"): Promise<string>;
export declare function ensureProgramGenerator(language: ExampleLanguage): Promise<string>;
