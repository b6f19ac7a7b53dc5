export interface BuiltPlugin {
  archive: string;
  executable: string;
  version: string;
  platform: string;
}
export interface PluginBuildOptions {
  platform?: string;
  node?: string;
  downloadUrl?: string;
}
export function buildPlugin(options?: PluginBuildOptions): Promise<BuiltPlugin>;
export function writeChecksums(folder: string, version?: string): string;
export function writePluginArchive(
  folder: string,
  options?: PluginBuildOptions,
): Promise<BuiltPlugin & { checksums: string }>;
