export declare const LOGO_PNG: string;
export declare const LOGO_SIZE: number;
export declare function drawnLogo(): Promise<Buffer>;
