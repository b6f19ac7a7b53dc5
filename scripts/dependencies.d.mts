export declare function cruiseProject(): Promise<{ violations: string[]; graph: string }>;
export declare function contributingGraph(): string;
