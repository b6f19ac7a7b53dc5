export declare const SDK_LANGUAGES: readonly ("nodejs" | "python" | "go" | "dotnet")[];
export declare function writeSchema(folder: string): string;
export declare function generateSdks(
  folder: string,
  languages?: readonly ("nodejs" | "python" | "go" | "dotnet")[],
): Promise<Record<string, string>>;
export declare function compileNodejsSdk(folder: string): string;
