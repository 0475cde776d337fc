// Node flags every hsds-org-api process runs with (the npm scripts in package.json repeat them).
// V8 sizes the young generation from the machine's memory, up to 128 MB on a large machine; at 16 MB
// per semi-space an import of 2,000,000 organizations peaks about 65 MB lower, at the same speed
// (measured, see docs/performance.md, "First start").
export const NODE_FLAGS = ['--max-semi-space-size=16'];

