export declare function bundlePlugin(schema: string): Promise<string>;
