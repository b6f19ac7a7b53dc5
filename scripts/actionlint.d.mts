export declare function ensureActionlint(): string;
export declare function lintWorkflows(files?: string[]): { ok: boolean; findings: string };
