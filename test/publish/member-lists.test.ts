import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { MemberLists } from '../../src/build/write-organizations.ts';

describe('membership lists of an import', () => {
  it('give back every position, in order, whatever the steps between them (1 to 5 bytes each)', () => {
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE members (term_position INTEGER, position_in_term INTEGER, organization_position INTEGER)');
    const lists = new MemberLists();
    // Steps under 128 take a byte; the largest positions SQLite and a 32-bit step can hold take five.
    const wide = [1, 2, 129, 130, 16_513, 2_113_665, 2_113_666, 270_549_121, 2 ** 31 - 1];
    const dense = Array.from({ length: 25_000 }, (_, index) => index * 3 + 7);
    for (const position of wide) lists.add(5, position);
    for (const position of dense) lists.add(2, position);
    assert.equal(lists.length(5), wide.length);
    assert.equal(lists.length(2), dense.length);
    lists.write(db, 'members (term_position, position_in_term, organization_position)');
    const rows = db.prepare('SELECT term_position, position_in_term, organization_position FROM members ORDER BY rowid').all() as Record<string, number>[];
    // Lists go out in key order, each member with its 1-based place in the list (over several statements for the long one).
    const expected = [...dense.map((position, index) => [2, index + 1, position]), ...wide.map((position, index) => [5, index + 1, position])];
    assert.deepEqual(rows.map((row) => [row.term_position, row.position_in_term, row.organization_position]), expected);
  });
});
