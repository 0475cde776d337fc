/** How numbers read in what people see: messages, progress lines and pages. */

/** A whole number with thousands separators: 1200 is "1,200". */
export const formatCount = (value: number): string => Math.round(value).toLocaleString('en-US');

/** A count and its noun, singular for 1: `counted(1, 'taxonomy', 'taxonomies')` is "1 taxonomy", `counted(1200, 'error')` "1,200 errors". */
export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(count)} ${count === 1 ? singular : plural}`;
}
