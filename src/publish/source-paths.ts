import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';

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
