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
export interface PluginPlatform {
  os: string;
  cpu: string;
  nodePackage: string;
  runner: string;
}
export const PLATFORMS: Record<string, PluginPlatform>;
export function pluginVersion(): string;
export function hostPlatform(): string | undefined;
export function archiveName(platform: string, version?: string): string;
export function checksumsName(version?: string): string;
export function bundlePlugin(downloadUrl?: string): Promise<string>;
export function buildPlugin(options?: PluginBuildOptions): Promise<BuiltPlugin>;
export function writeChecksums(folder: string, version?: string): string;
export function writePluginArchive(
  folder: string,
  options?: PluginBuildOptions,
): Promise<BuiltPlugin & { checksums: string }>;
