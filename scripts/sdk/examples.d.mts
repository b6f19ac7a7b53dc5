import type { ExampleLanguage } from "../sdk/generators.mjs";

export declare const EXAMPLE_LANGUAGES: readonly { language: ExampleLanguage; heading: string; fence: string }[];
export declare function exampleSources(): Promise<Record<string, Record<ExampleLanguage, string>>>;
