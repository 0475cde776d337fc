import { describe } from 'node:test';
import { describeStoreContract } from './contract.ts';
import { postgresSuite, publishedDatabase } from '../helpers/postgres.ts';

describe('PostgreSQL', postgresSuite, () => {
  describeStoreContract('PostgreSQL', async (input) => {
    const { stores, dispose } = await publishedDatabase(input);
    return { store: stores.acquire().store, dispose };
  });
});
