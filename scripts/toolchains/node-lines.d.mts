export declare const supportedNodeLines: number[];
export declare function otherNodeLines(): number[];
export declare function ensureNodeLine(line: number): Promise<{ node: string; binDir: string; version: string }>;
export declare function ensureNodeBinary(os: string, cpu: string, version?: string): Promise<string>;
