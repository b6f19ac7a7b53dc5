export declare const REFERENCE_DIR: string;
export declare function referencePages(): { path: string; text: string }[];
