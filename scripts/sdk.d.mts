export declare const SDK_LANGUAGES: readonly ("nodejs" | "python" | "go" | "dotnet")[];
export declare const REGISTRY_SCHEMA: string;
export declare function writeSchema(folder: string): string;
export declare function generateSdks(
  folder: string,
  languages?: readonly ("nodejs" | "python" | "go" | "dotnet")[],
): Promise<Record<string, string>>;
export declare function compileNodejsSdk(folder: string): string;
export declare function packageSdks(
  folder: string,
  sdks: Record<string, string>,
  goModuleFolder?: string,
): { npm: string; wheel: string; sdist: string; goModule: string; nupkg: string | undefined };
