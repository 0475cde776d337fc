export declare const NODE_FLAGS: readonly string[];
