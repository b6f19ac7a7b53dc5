export declare function digestOf(inputs: unknown): string;
export declare function fileDigest(path: string): string;
export declare function ensureArtefact(
  kind: string,
  inputs: unknown,
  make: (work: string, scratch: string) => Promise<object | undefined> | object | undefined | Promise<void> | void,
): Promise<{ folder: string; manifest: Record<string, unknown>; made: boolean }>;
