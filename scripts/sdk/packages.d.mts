export declare const GO_MODULE_FOLDER: string;
export declare function compileNodejsSdk(folder: string): Promise<string>;
export declare function ensurePackages(
  schemaFile: string,
  sdks: Record<string, string>,
): Promise<{ npm: string; wheel: string; sdist: string; goModule: string; nupkg?: string }>;
