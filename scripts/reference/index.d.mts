export declare const REFERENCE_DIR: string;
export declare function referencePages(): Promise<{ path: string; text: string }[]>;
