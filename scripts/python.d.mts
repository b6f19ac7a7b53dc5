export declare const virtualEnvironment: string;
export declare function ensurePythonEnvironment(): string;
export declare function installPythonPackage(folder: string): string;
