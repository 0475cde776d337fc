export declare const NODE_FLAGS: readonly string[];
export declare const SERVE_NODE_FLAGS: readonly string[];
