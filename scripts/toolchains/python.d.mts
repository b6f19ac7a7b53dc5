export declare function ensurePythonEnvironment(): Promise<string>;
export declare function ensurePythonBuild(): Promise<string>;
export declare function installPythonPackage(folder: string): Promise<string>;
