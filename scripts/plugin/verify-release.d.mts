export interface BuiltPackages {
  npm?: string;
  wheel?: string;
  goModule?: string;
  nupkg?: string;
}
export declare function writeVerifyProject(
  language: "nodejs" | "python" | "go" | "dotnet" | "yaml",
  folder: string,
  version: string,
  packages?: BuiltPackages,
): Record<string, string>;
