export declare function ensureLinters(): Promise<{ actionlint: string; shellcheck: string }>;
export declare function lintWorkflows(files?: string[]): Promise<{ ok: boolean; findings: string }>;
