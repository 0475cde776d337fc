// Node flags every hsds-org-api process runs with (the npm scripts in package.json repeat them).
// V8 sizes the young generation from the machine's memory, up to 128 MB on a large machine; at 16 MB
// per semi-space an import of 2,000,000 organizations peaks about 65 MB lower, at the same speed
// (measured, see README "Import speed").
export const NODE_FLAGS = ['--max-semi-space-size=16'];

// Added for `serve`. Its live heap is about 30 MB (response bodies are Buffers, outside the heap), but
// left to itself V8 lets garbage from a streamed export grow the old space to about 180 MB before it
// compacts; at 128 MB the export of 2,000,000 organizations peaks at 212 MiB RSS instead of 290, at
// the same speed (measured, see README "Serving speed").
export const SERVE_NODE_FLAGS = ['--max-old-space-size=128'];
