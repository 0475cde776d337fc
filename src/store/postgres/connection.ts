import pg from 'pg';
import { StoreUnavailable } from '../store.ts';

/** How the server reaches PostgreSQL (see config.ts for the settings behind each). */
export interface PostgresSettings {
  /** The primary: publishing, LISTEN, and reads when there are no replicas. */
  url: string;
  /** Read replicas: every read goes to one of them, in turn. */
  replicaUrls: readonly string[];
  /** Connections per pool (one pool per database). */
  poolSize: number;
  /** Longest a statement may run, and (with a second more) longest a query may wait for its answer. */
  statementTimeoutMs: number;
  /** Longest a request may wait for a connection, from the pool or a new one. */
  connectTimeoutMs: number;
}

export const DEFAULT_POSTGRES_SETTINGS = { poolSize: 10, statementTimeoutMs: 5000, connectTimeoutMs: 1000 } as const;

export function createPool(url: string, settings: Omit<PostgresSettings, 'url' | 'replicaUrls'>, purpose: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    // A server that stops answering (not refusing) must not hold a request either.
    query_timeout: settings.statementTimeoutMs + 1000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: `hsds-org-api ${purpose}`,
    // Off for these sessions: the planner's costs of a search over millions of rows pass jit_above_cost,
    // and compiling took longer than the query (the search bench's p95 at 326k: 13.5 ms on, 10.2 off).
    options: '-c jit=off',
  });
  // An idle connection the server closed (a restart) is dropped from the pool; the next query opens another.
  pool.on('error', () => {});
  return pool;
}

/** Errors that say the database cannot answer now (rather than that a query is wrong). */
const UNAVAILABLE_CLASSES = ['08', '53', '57', '58'];
/** The generation being read was dropped (a request outlived two publishes): try again. */
const GONE = ['42P01', '3F000'];

export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (error instanceof pg.DatabaseError) return typeof code === 'string' && (UNAVAILABLE_CLASSES.includes(code.slice(0, 2)) || GONE.includes(code));
  // Anything else from the driver is about the connection: refused, reset, timed out, ended.
  return true;
}

/** Runs a query, turning "the database cannot answer now" into StoreUnavailable (a 503, not a 500). */
export async function query<Row extends pg.QueryResultRow>(pool: pg.Pool, sql: string, params: unknown[] = []): Promise<Row[]> {
  try {
    return (await pool.query<Row>(sql, params)).rows;
  } catch (error) {
    if (isUnavailable(error)) throw new StoreUnavailable('the database is not reachable', { cause: error });
    throw error;
  }
}

/** Ends a pool, whatever state its connections are in. */
export const endPool = (pool: pg.Pool): Promise<void> => pool.end().catch(() => {});
