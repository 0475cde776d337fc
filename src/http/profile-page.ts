import { Marked } from 'marked';

/**
 * The profile as a page for people: the profile's Markdown source rendered to HTML, then the list of
 * its machine-readable files. Plain HTML and inline styles: no script, nothing loaded, readable on
 * a phone.
 */

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);

/** Heading ids as GitHub makes them, so `/profile#invalid-parameter` (a problem's `type`) lands on its section. */
const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

const markdown = new Marked({
  renderer: {
    heading({ tokens, depth }) {
      const text = this.parser.parseInline(tokens);
      return `<h${depth} id="${escapeHtml(slug(text))}">${text}</h${depth}>\n`;
    },
  },
});

const STYLE = `
  body { font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; margin: 0; }
  main { max-width: 46rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
  h1 { font-size: 1.7rem; line-height: 1.25; } h2 { margin-top: 2rem; border-bottom: 1px solid #d8dee4; padding-bottom: .25rem; }
  code { font: .9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f1f3f5; padding: .1em .3em; border-radius: 4px; overflow-wrap: anywhere; }
  a { color: #0b5cad; overflow-wrap: anywhere; } li { margin: .2rem 0; }
  nav { font-size: .9rem; padding: .6rem 1.25rem; background: #f6f8fa; border-bottom: 1px solid #d8dee4; }
  table { border-collapse: collapse; } td, th { border: 1px solid #d8dee4; padding: .3rem .5rem; text-align: left; vertical-align: top; }
`;

interface ProfileDescription {
  title: string;
  version: string;
  hsds_version: string;
  base_schema: string;
  modifications: Record<string, string>;
  schema: Record<string, string>;
  documentation: { markdown: string };
}

const fileList = (files: Record<string, string>): string =>
  `<ul>${Object.entries(files)
    .map(([file, url]) => `<li><a href="${escapeHtml(url)}"><code>${escapeHtml(file)}</code></a></li>`)
    .join('')}</ul>`;

/** @param apiBase the API root's URL, for the page's links */
export function profilePage(source: string, profile: ProfileDescription, apiBase: string): string {
  const machineReadable = `
<h2 id="machine-readable">Machine-readable profile</h2>
<p>Profile version ${escapeHtml(profile.version)}, of HSDS ${escapeHtml(profile.hsds_version)} (<a href="${escapeHtml(profile.base_schema)}">the official files</a>).</p>
<h3 id="modifications">Merge patches</h3>
${fileList(profile.modifications)}
<h3 id="compiled-schemas">Compiled schemas</h3>
${fileList(profile.schema)}
<p><a href="${escapeHtml(profile.documentation.markdown)}">This page's Markdown source</a>.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(profile.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<nav><a href="${escapeHtml(apiBase)}">API root</a> · <a href="${escapeHtml(apiBase)}/openapi.json">OpenAPI</a> · <a href="${escapeHtml(apiBase)}/docs">API documentation</a> · <a href="#machine-readable">Merge patches and schemas</a></nav>
<main>
${markdown.parse(source, { async: false })}
${machineReadable}
</main>
</body>
</html>
`;
}
