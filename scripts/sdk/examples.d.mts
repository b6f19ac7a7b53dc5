import type { ExampleLanguage } from "./generators.mjs";

export interface Example {
  title: string;
  sources: Record<ExampleLanguage, string>;
}
export declare const INDEX_EXAMPLE: string;
export declare const EXAMPLE_LANGUAGES: readonly { language: ExampleLanguage; heading: string; fence: string }[];
export declare function ensureExamples(schemaText: string): Promise<Record<string, Example>>;
export declare function examplesSection(example: Example): string;
export declare function exampleIn(
  description: string,
): { title: string; sources: Partial<Record<ExampleLanguage, string>> } | undefined;
export declare function withoutExamples(description: string): string;
