import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { Diagnostic } from './diagnostics.ts';

/**
 * Where sources may come from. A source folder (a datapackage, or a directory given to `import`) is a
 * boundary: a file in it, or a path through a folder in it, that a symbolic link leads outside is never
 * read, so a package cannot make an import publish (or quote in a warning) a file it does not hold.
 * Links that stay inside are followed. Only regular files are read: opening a named pipe would wait
 * forever for a writer, and a device or socket is no source.
 */

/** A folder whose files must stay inside it: as given (for messages) and as resolved. */
export interface SourceRoot {
  path: string;
  real: string;
}

export type CheckedPath =
  | { real: string; stats: Stats; problem?: undefined }
  /**
   * `missing`: nothing at all is at the path (not even a broken link); `stats`: what is there, when
   * something is but it is refused.
   */
  | { problem: string; missing: boolean; stats?: Stats };

/** Why a file is not one to read, or undefined when it is a regular file. */
export function notRegularFile(stats: Stats): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'this is a directory, not a file';
  const what = stats.isFIFO() ? 'a named pipe (FIFO)' : stats.isSocket() ? 'a socket' : stats.isCharacterDevice() || stats.isBlockDevice() ? 'a device' : 'a special file';
  return `is ${what}, not a regular file; give a regular file`;
}

const isWithin = (real: string, root: string): boolean => {
  const path = relative(root, real);
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path));
};

/** The folder with its resolved path, or why it cannot be resolved. */
export function sourceRoot(path: string): SourceRoot | { problem: string } {
  try {
    return { path, real: realpathSync.native(path) };
  } catch (error) {
    return { problem: describeFileError(error) };
  }
}

/** Where a symbolic link points, or undefined when `path` is not one (or is gone). */
function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resolves a source path through any symbolic links, without opening it. A path that leads outside
 * `root` (when given) is refused, naming where it leads; so are loops and links to nothing.
 */
export function checkSourcePath(path: string, root?: SourceRoot): CheckedPath {
  let real: string;
  let stats: Stats;
  try {
    real = realpathSync.native(path);
    stats = statSync(real);
  } catch (error) {
    const code = (error as { code?: string }).code;
    const target = code === 'ENOENT' ? linkTarget(path) : undefined;
    if (target !== undefined) return { problem: `is a symbolic link to ${target}, which does not exist`, missing: false };
    return { problem: describeFileError(error), missing: code === 'ENOENT' };
  }
  if (root !== undefined && !isWithin(real, root.real)) {
    return {
      problem: `leads (through a symbolic link) to ${real}, outside ${root.path}; a source must be inside the folder given: copy it in, or give it as a source of its own`,
      missing: false,
      stats,
    };
  }
  return { real, stats };
}

/** Like checkSourcePath, and the path must be a regular file. */
export function checkSourceFile(path: string, root?: SourceRoot): CheckedPath {
  const checked = checkSourcePath(path, root);
  if (checked.problem !== undefined) return checked;
  const problem = notRegularFile(checked.stats);
  return problem === undefined ? checked : { problem, missing: false, stats: checked.stats };
}

/** Explains a file-system error in a publisher's words. */
export function describeFileError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'the file does not exist';
  if (code === 'EACCES') return 'the file cannot be read (permission denied)';
  if (code === 'EISDIR') return 'this is a directory, not a file';
  if (code === 'ELOOP') return 'is a symbolic link loop (a link that leads back to itself); fix or remove the link';
  if (code === 'ENOTDIR') return 'a part of this path is a file, not a directory';
  return (error as Error).message;
}

/**
 * Files plainly not data, which a folder of sources may well hold, read or not without a word:
 * dotfiles (`.gitkeep`, `.DS_Store`), Office lock files (`~$...`) and editor backups (`...~`),
 * Markdown (`*.md`), READMEs, licences, provenance notes, notices and change logs (`README`,
 * `README.txt`, `LICENSE-data`...), `datapackage.json` (read by the HSDS package reader itself), and
 * Windows' `Thumbs.db` and `desktop.ini`. Any other file that is not read draws a warning, so that a
 * misnamed source is not silently left out.
 */
const NOT_DATA = /^(\.|~\$)|~$|\.md$|^(readme|licen[cs]e|copying|notice|provenance|changelog)([._-].*)?$|^(thumbs\.db|desktop\.ini|datapackage\.json)$/i;

export const isPlainlyNotData = (name: string): boolean => NOT_DATA.test(name);

/**
 * The files, less (each with an error) any whose name differs only in case from an earlier one in
 * the same folder: names are recognised ignoring case, so `organizations.csv` and `Organizations.csv`
 * would both be the organizations. The first, in byte order, is read, so the other files' references
 * into it still resolve; the import fails all the same.
 */
export function withoutCaseTwins(files: readonly string[], report: (problem: Diagnostic) => void): string[] {
  const first = new Map<string, string>();
  return files.filter((file) => {
    const key = join(dirname(file), basename(file).toLowerCase());
    const twin = first.get(key);
    if (twin === undefined) {
      first.set(key, file);
      return true;
    }
    report({ file, message: `has the same name as ${basename(twin)} beside it but for case; names are read ignoring case, so keep one of the two (this one is not read)` });
    return false;
  });
}
