export declare const supportedNodeLines: number[];
export declare function otherNodeLines(): number[];
export declare function ensureNodeLine(line: number): { node: string; binDir: string; version: string };
