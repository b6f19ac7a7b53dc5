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
  /** A schema written elsewhere to serve, instead of the build's (ensureSchema). */
  schemaFile?: string;
}
export function buildPlugin(options?: PluginBuildOptions): Promise<BuiltPlugin>;
export function writeChecksums(folder: string, version?: string): string;
export function writePluginArchive(
  folder: string,
  options?: PluginBuildOptions,
): Promise<BuiltPlugin & { checksums: string }>;
