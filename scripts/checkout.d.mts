export declare function commitOf(ref: string): string;
export declare function builtCheckout(ref: string): Promise<{
  commit: string;
  tree: string;
  packageVersion: string;
  pulumiVersion: string;
  env: Record<string, string>;
}>;
