import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { it } from 'node:test';

// `tsc --noEmit` over src, test, bench and scripts, as one test: it runs beside the other test files
// rather than before them all.
it('type-checks (tsc --noEmit)', async () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const root = new URL('..', import.meta.url).pathname;
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(process.execPath, [tsc, '--noEmit', '--pretty', 'false'], { cwd: root, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), output: `${stdout}${stderr}` }),
    );
  });
  assert.equal(code, 0, output);
});
