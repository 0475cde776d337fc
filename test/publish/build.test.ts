import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { buildSnapshot, InvalidDataset } from '../../src/publish/build.ts';
import { publishDataset } from '../../src/publish/publish.ts';
import { currentSnapshotPath } from '../../src/store/snapshot-directory.ts';
import type { DatasetInput } from '../../src/hsds/records.ts';
import { fixtureDataset, publishedOrganizations, terms, unpublishedOrganizations } from '../fixtures/dataset.ts';
import { temporaryDirectory } from '../helpers/app.ts';

function servedRows(file: string): string[] {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return ['taxonomies', 'taxonomy_terms', 'organizations'].flatMap((table) =>
      (db.prepare(`SELECT * FROM ${table} ORDER BY position`).all() as object[]).map((row) => JSON.stringify(row)),
    );
  } finally {
    db.close();
  }
}

describe('building a snapshot', () => {
  it('gives the same version and the same bytes for the same input, whenever it runs', async () => {
    const directory = temporaryDirectory();
    try {
      const first = await buildSnapshot(fixtureDataset(), join(directory.path, 'a.sqlite'), { now: () => new Date('2026-01-01') });
      const second = await buildSnapshot(fixtureDataset(), join(directory.path, 'b.sqlite'));
      assert.equal(first.version, second.version);
      assert.deepEqual(servedRows(join(directory.path, 'a.sqlite')), servedRows(join(directory.path, 'b.sqlite')));
    } finally {
      directory.remove();
    }
  });

  it('changes the version when served content changes', async () => {
    const directory = temporaryDirectory();
    try {
      const before = await buildSnapshot(fixtureDataset(), join(directory.path, 'a.sqlite'));
      const renamed = publishedOrganizations.map((organization, index) => (index === 0 ? { ...organization, name: 'Renamed' } : organization));
      const after = await buildSnapshot(fixtureDataset({ organizations: renamed }), join(directory.path, 'b.sqlite'));
      assert.notEqual(before.version, after.version);
    } finally {
      directory.remove();
    }
  });

  it('keeps unpublished organizations out of the snapshot entirely', async () => {
    const directory = temporaryDirectory();
    try {
      const result = await buildSnapshot(fixtureDataset(), join(directory.path, 'a.sqlite'));
      assert.equal(result.organizations, publishedOrganizations.length);
      assert.equal(result.unpublishedOrganizations, unpublishedOrganizations.length);
      const bytes = readFileSync(join(directory.path, 'a.sqlite')).toString('latin1');
      for (const organization of unpublishedOrganizations) assert.ok(!bytes.includes(organization.externalId));
    } finally {
      directory.remove();
    }
  });

  const invalid: [string, Partial<DatasetInput>, RegExp][] = [
    ['a duplicate organization', { organizations: [publishedOrganizations[0]!, publishedOrganizations[0]!] }, /NAT-001 is defined twice/],
    [
      'a tag naming an unknown term',
      { organizations: [{ ...publishedOrganizations[0]!, tags: [{ taxonomy: 'things', code: 'ZZ' }] }] },
      /tag things:ZZ names no known taxonomy term/,
    ],
    ['a term whose parent does not exist', { terms: [...terms, { taxonomy: 'things', code: 'X1', name: 'x', description: '', parentCode: 'nope' }] }, /names parent nope/],
    [
      'a parent cycle',
      {
        terms: [
          { taxonomy: 'things', code: 'P', name: 'p', description: '', parentCode: 'Q' },
          { taxonomy: 'things', code: 'Q', name: 'q', description: '', parentCode: 'P' },
        ],
        organizations: [],
      },
      /parent cycle/,
    ],
    ['a duplicate term', { terms: [...terms, terms[0]!] }, /things:A is defined twice/],
    ['taxonomy codes equal but for case', { taxonomies: [...fixtureDataset().taxonomies, { code: 'THINGS', name: 'x', description: '' }] }, /taxonomy (THINGS|things) is defined twice \(codes are case-insensitive\)/],
  ];
  for (const [label, overrides, message] of invalid) {
    it(`refuses ${label}, leaving the live dataset untouched and no temporary file`, async () => {
      const directory = temporaryDirectory();
      try {
        const live = await publishDataset(fixtureDataset(), directory.path);
        const before = readdirSync(join(directory.path, 'snapshots'));
        await assert.rejects(
          publishDataset(fixtureDataset(overrides), directory.path),
          (error: Error) => error instanceof InvalidDataset && error.diagnostics.errors.some((problem) => message.test(problem.message)),
        );
        assert.equal(currentSnapshotPath(directory.path), live.snapshot);
        assert.deepEqual(readdirSync(join(directory.path, 'snapshots')), before);
      } finally {
        directory.remove();
      }
    });
  }

  it('reports progress while reading organizations', async () => {
    const directory = temporaryDirectory();
    try {
      const seen: string[] = [];
      await buildSnapshot(fixtureDataset(), join(directory.path, 'a.sqlite'), { onProgress: (stage, rows) => seen.push(`${stage} ${rows}`) });
      assert.deepEqual(seen, [`read ${publishedOrganizations.length + unpublishedOrganizations.length}`, `write ${publishedOrganizations.length}`]);
      assert.ok(existsSync(join(directory.path, 'a.sqlite')));
    } finally {
      directory.remove();
    }
  });
});
