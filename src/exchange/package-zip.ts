import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Zip, ZipDeflate } from 'fflate';

/**
 * Zips the files of a folder, in the order given, into `target`, streaming: each file is read in
 * chunks and deflated as it is read, and the archive written as it is made. Every entry gets the
 * time `modified` (the dataset's publish time) so the same files always make the same bytes.
 */
export async function zipFiles(directory: string, names: readonly string[], target: string, modified: Date): Promise<void> {
  const out = createWriteStream(target);
  let failure: Error | undefined;
  out.on('error', (error) => (failure ??= error));
  const zip = new Zip((error, chunk, final) => {
    if (error !== null) failure ??= error;
    else out.write(chunk);
    if (final) out.end();
  });
  const finished = once(out, 'finish');
  for (const name of names) {
    const entry = new ZipDeflate(name, { level: 6 });
    entry.mtime = modified;
    zip.add(entry);
    for await (const chunk of createReadStream(join(directory, name), { highWaterMark: 256 * 1024 })) {
      entry.push(chunk as Uint8Array);
      if (failure !== undefined) throw failure;
      if (out.writableNeedDrain) await once(out, 'drain');
    }
    entry.push(new Uint8Array(0), true);
  }
  zip.end();
  await finished;
  if (failure !== undefined) throw failure;
}
