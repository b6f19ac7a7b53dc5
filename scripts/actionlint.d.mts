export declare function ensureLinters(): { actionlint: string; shellcheck: string };
export declare function lintWorkflows(files?: string[]): { ok: boolean; findings: string };
