import pg from 'pg';
import { PostgresStores } from '/work/main/src/store/postgres/live.ts';
const original = pg.Pool.prototype.query;
let log: string[] = [];
(pg.Pool.prototype as any).query = async function (this: any, ...args: any[]) {
  const started = performance.now();
  const result = await (original as any).apply(this, args);
  const text = typeof args[0] === 'string' ? args[0] : args[0].text;
  log.push(`${(performance.now() - started).toFixed(1).padStart(6)} ms ${text.replace(/\s+/g, ' ').slice(0, 260)} ${JSON.stringify(typeof args[0] === 'string' ? args[1] : args[0].values)?.slice(0, 120)}`);
  return result;
};
const stores = await PostgresStores.open({ url: 'postgres://postgres@127.0.0.1:5432/searchbench', replicaUrls: [], poolSize: 4, statementTimeoutMs: 5000, connectTimeoutMs: 1000 } as any, { info: () => {}, error: () => {} });
const queries = process.argv.slice(2);
for (const q of queries) {
  for (let round = 0; round < 3; round++) {
    log = [];
    const lease = stores.acquire();
    const t = performance.now();
    const page = await lease.store.organizations({ search: [q] }, { first: 1, count: 10 });
    const total = performance.now() - t;
    lease.release();
    if (round === 2) { console.log(`== ${q}: ${total.toFixed(1)} ms, ${page.total} matches`); for (const l of log) console.log(l); }
  }
}
await stores.close();
