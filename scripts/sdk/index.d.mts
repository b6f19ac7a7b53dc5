export type SdkLanguage = "nodejs" | "python" | "go" | "dotnet";
export declare const SDK_LANGUAGES: readonly SdkLanguage[];
export declare function generateSdks(
  folder: string,
  languages?: readonly SdkLanguage[],
): Promise<Record<string, string>>;
export declare function packageSdks(
  folder: string,
  goModuleFolder?: string,
): Promise<{ npm: string; wheel: string; sdist: string; goModule: string; nupkg: string | undefined }>;
