export interface PluginPlatform {
  os: string;
  cpu: string;
  nodePackage: string;
  runner: string;
}
export const RELEASE_NODE_LINE: number;
export const PLATFORMS: Record<string, PluginPlatform>;
export function executableName(platform: string): string;
export function hostPlatform(): string | undefined;
export function archiveName(platform: string, version?: string): string;
export function checksumsName(version?: string): string;
