// Types of ensure-build.mjs (plain JavaScript, so that it runs before anything is compiled).
export declare function isStale(): boolean;
export declare function build(): void;
export declare function ensureBuilt(opts?: { force?: boolean }): string;
