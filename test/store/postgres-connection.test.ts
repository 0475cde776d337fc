import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPool, DEFAULT_POSTGRES_SETTINGS, query } from '../../src/store/postgres/connection.ts';
import { POSTGRES_URL, postgresSuite } from '../helpers/postgres.ts';

describe('PostgreSQL connections', postgresSuite, () => {
  it('run their queries without JIT compilation, whatever the server sets', async () => {
    const pool = createPool(POSTGRES_URL, DEFAULT_POSTGRES_SETTINGS, 'test');
    try {
      const [row] = await query<{ jit: string }>(pool, 'SHOW jit');
      assert.equal(row!.jit, 'off');
    } finally {
      await pool.end();
    }
  });
});
