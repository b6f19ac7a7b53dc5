export function pluginVersion(): string;
export function buildPluginArchive(folder?: string): string;
