import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { progressStage } from '../../src/cli/progress.ts';
import { NATIVE_EXAMPLE } from '../helpers/imports.ts';

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;

describe('import progress', () => {
  it('prints plain lines with rows done, rows/s and elapsed time', () => {
    const lines: string[] = [];
    const stage = progressStage('lines', 'reading sources', 1000, (line) => lines.push(line));
    stage.update(500, 1234);
    stage.finish();
    assert.equal(lines.length, 1, 'no line before the interval, one at the end');
    assert.match(lines[0]!, /^reading sources: 1,234 rows, [\d,]+ rows\/s, \d+\.\d s$/);
  });

  it('prints nothing with --progress none', () => {
    const lines: string[] = [];
    const stage = progressStage('none', 'reading sources', 1000, (line) => lines.push(line));
    stage.update(1000, 10);
    stage.finish();
    assert.deepEqual(lines, []);
  });

  it('draws a bar when asked (automatically on a terminal), and lines in a pipe by default', () => {
    const bar = spawnSync(process.execPath, [CLI, 'validate', '--progress', 'bar', NATIVE_EXAMPLE], { encoding: 'utf8' });
    assert.equal(bar.status, 0, bar.stderr);
    assert.match(bar.stderr, /reading sources +\[#+-*\] \d+% \| [\d,]+ rows \| [\d,]+ rows\/s \| \d+\.\d s/);
    const piped = spawnSync(process.execPath, [CLI, 'validate', NATIVE_EXAMPLE], { encoding: 'utf8', env: { ...process.env, PROGRESS: '' } });
    assert.match(piped.stderr, /^reading sources: 5 rows, [\d,]+ rows\/s, \d+\.\d s$/m);
  });
});
