export declare const virtualEnvironment: string;
export declare function ensurePythonEnvironment(): Promise<string>;
export declare function installPythonPackage(folder: string): Promise<string>;
