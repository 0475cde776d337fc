import { hash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';

/**
 * What stands for "this server's code" in every ETag: a digest of the files the server renders
 * responses from, read once at start. Any change to how an envelope, a link, a header or a page is
 * made changes a file here, and so the ETag, without a version number someone must remember to
 * bump; clients and edge caches then fetch the new bytes instead of being told 304 for the old.
 * Strong ETags promise identical bytes, so the Node.js version, whose zlib makes the compressed
 * bodies, is part of it too. It over-counts (a change to the import code, or to a comment, also
 * changes it): that costs one revalidation per cached response after an upgrade, never stale bytes.
 */

/** Paths, from the project's root, the server reads its code and the documents it serves from; a folder ends with `/`. */
export const RENDERING_INPUTS = ['src/', 'profile/', 'vendor/', 'docs/profile.md', 'package.json', 'package-lock.json'];

const PROJECT_ROOT = new URL('../../', import.meta.url);

function filesOf(root: URL, input: string): string[] {
  const url = new URL(input, root);
  if (!existsSync(url)) return [];
  if (!statSync(url).isDirectory()) return [input];
  return readdirSync(url, { recursive: true, encoding: 'utf8' })
    .map((name) => `${input}${name}`)
    .filter((path) => statSync(new URL(path, root)).isFile());
}

/** The digest of `inputs` under `root`: each file's path and bytes, in path order, and the Node.js version. */
export function codeDigest(root: URL = PROJECT_ROOT, inputs: readonly string[] = RENDERING_INPUTS): string {
  const parts: string[] = [`node ${process.version}`];
  for (const path of inputs.flatMap((input) => filesOf(root, input)).sort()) {
    parts.push(`${path}\0${hash('sha256', readFileSync(new URL(path, root)), 'hex')}`);
  }
  return hash('sha256', parts.join('\n'), 'base64url');
}

/** This server's code, as it was at start. */
export const CODE_DIGEST = codeDigest();
