/**
 * HTML made safely: text goes into a page only through `html`, which escapes every value it is given
 * unless the value is Html already (made by `html` itself). Data from a dataset is never trusted.
 */

export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => ENTITIES[character]!);

/** One value of a template: Html as it is, a list value by value, nothing for null, undefined and false. */
function fragment(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(fragment).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** A template of HTML whose values are escaped (see fragment). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0]!;
  for (let index = 0; index < values.length; index++) text += fragment(values[index]) + strings[index + 1]!;
  return new Html(text);
}

/** The same look on every page for people (and the profile page): system fonts, no asset to load. */
export const PAGE_STYLE = `
  body { font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; margin: 0; }
  main { max-width: 46rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
  h1 { font-size: 1.7rem; line-height: 1.25; } h2 { margin-top: 2rem; border-bottom: 1px solid #d8dee4; padding-bottom: .25rem; }
  code { font: .9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f1f3f5; padding: .1em .3em; border-radius: 4px; overflow-wrap: anywhere; }
  a { color: #0b5cad; overflow-wrap: anywhere; } li { margin: .2rem 0; }
  nav { font-size: .9rem; padding: .6rem 1.25rem; background: #f6f8fa; border-bottom: 1px solid #d8dee4; }
  table { border-collapse: collapse; } td, th { border: 1px solid #d8dee4; padding: .3rem .5rem; text-align: left; vertical-align: top; }
`;

/** No script, nothing from elsewhere: the pages are HTML and inline styles only. */
export const PAGE_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
