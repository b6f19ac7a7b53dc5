export declare const GO_MODULE_FOLDER: string;
export declare function packNodejsSdk(folder: string, out: string): string;
export declare function buildPythonSdk(folder: string, out: string): { wheel: string; sdist: string };
export declare function writeGoModule(folder: string, schemaFile: string, target?: string): string;
export declare function packDotnetSdk(folder: string, out: string): string | undefined;
