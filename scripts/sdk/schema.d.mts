import type { Example } from "./examples.mjs";

export declare const REGISTRY_SCHEMA: string;
export declare function downloadUrlFromEnvironment(): string | undefined;
export declare function ensureSchema(
  downloadUrl: string | undefined,
): Promise<{ file: string; text: string; examples: Record<string, Example> }>;
