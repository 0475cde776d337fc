import { Marked } from 'marked';
import { escapeHtml, PAGE_STYLE } from './html.ts';

/**
 * The profile as a page for people: the profile's Markdown source rendered to HTML, then the list of
 * its machine-readable files. Plain HTML and inline styles: no script, nothing loaded, readable on
 * a phone.
 */


/** Heading ids as GitHub makes them, so `/profile#invalid-parameter` (a problem's `type`) lands on its section. */
const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

/** A link to another of the project's documents (`search.md#facets`): relative to `docs/`, which this server does not serve. */
const PROJECT_DOCUMENT = /^([\w-]+\.md)(#[\w-]*)?$/;

const markdown = new Marked({
  renderer: {
    heading({ tokens, depth }) {
      const text = this.parser.parseInline(tokens);
      return `<h${depth} id="${escapeHtml(slug(text))}">${text}</h${depth}>\n`;
    },
    // Named where it is, in the project, rather than a link to a page that is not here.
    link({ href, tokens }) {
      const document = PROJECT_DOCUMENT.exec(href);
      if (document === null) return false;
      const text = this.parser.parseInline(tokens);
      const path = `docs/${document[1]}`;
      return text === document[1] || text === `<code>${document[1]}</code>` ? `<code>${escapeHtml(path)}</code>` : `${text} (<code>${escapeHtml(path)}</code>)`;
    },
  },
});

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
<style>${PAGE_STYLE}</style>
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
