// json-merge-patch ships no types: the two functions this project uses.
declare module 'json-merge-patch' {
  /** Applies an RFC 7386 merge patch to `target` (modifying it) and returns the result. */
  export function apply(target: unknown, patch: unknown): any;
  /** The merge patch that turns `before` into `after`; undefined when they are equal. */
  export function generate(before: unknown, after: unknown): any;
  const jsonMergePatch: { apply: typeof apply; generate: typeof generate };
  export default jsonMergePatch;
}
