import pg from 'pg';
import { StoreUnavailable } from '../store.ts';
import type { LiveStoreLog, Readiness, Store, StoreLease, StoreProvider } from '../store.ts';
import { createPool, endPool, query } from './connection.ts';
import type { PostgresSettings } from './connection.ts';
import { generationFacts, PostgresStore } from './store.ts';

/** The channel a publish notifies, with the new generation's id as payload. */
export const PUBLISH_CHANNEL = 'hsds_publish';

/** How soon a lost listening connection is opened again. */
const RECONNECT_MS = 500;
/** How often the live pointer is read anyway, in case a notification was missed. */
const POLL_MS = 5000;
/** How long a replica may lag behind a publish before the switch goes ahead without it. */
const REPLICA_WAIT_MS = 30_000;

/** Answers every question with StoreUnavailable: what requests get before a generation is loaded. */
function unavailableStore(reason: () => string): Store {
  return new Proxy({} as Store, {
    get: (_target, name) => (name === 'then' ? undefined : () => {
      throw new StoreUnavailable(reason());
    }),
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Serves the live generation of a PostgreSQL database and follows each publish: a connection to
 * the primary LISTENs for the publish notification (and reads the pointer every few seconds, and on
 * every reconnection, in case one was missed). Reads go to the replicas in turn, or to the primary.
 * While the database is unreachable, requests fail fast with StoreUnavailable; the pools and the
 * listener reconnect by themselves.
 */
export class PostgresStores implements StoreProvider {
  private readonly settings: PostgresSettings;
  private readonly log: LiveStoreLog;
  private readonly primary: pg.Pool;
  private readonly replicas: pg.Pool[];
  private nextReplica = 0;
  private current: PostgresStore | undefined;
  private currentGeneration: number | undefined;
  private notReady = 'connecting to the database';
  private readonly unavailable: Store;
  private listener: pg.Client | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private readonly poll: NodeJS.Timeout;
  private following: Promise<void> = Promise.resolve();
  private outage = false;
  private lastProblem: string | undefined;
  private closed = false;
  /** Settles when the first connection attempt has loaded the live generation, or failed to. */
  private readonly firstAttempt: Promise<void>;
  private firstAttemptDone!: () => void;

  /**
   * Opens the provider and waits for its first connection attempt: a server that listens after it
   * serves the live dataset at once when the database is up, and answers 503 while it is not.
   */
  static async open(settings: PostgresSettings, log: LiveStoreLog, pollMs = POLL_MS): Promise<PostgresStores> {
    const stores = new PostgresStores(settings, log, pollMs);
    await stores.firstAttempt;
    return stores;
  }

  /** `pollMs`: how often the pointer is read besides notifications (a test sets it past its own length, to see notifications alone at work). */
  constructor(settings: PostgresSettings, log: LiveStoreLog, pollMs = POLL_MS) {
    this.firstAttempt = new Promise((resolve) => (this.firstAttemptDone = resolve));
    this.settings = settings;
    this.log = log;
    this.primary = createPool(settings.url, settings, 'primary');
    this.replicas = settings.replicaUrls.map((url) => createPool(url, settings, 'replica'));
    this.unavailable = unavailableStore(() => this.notReady);
    this.poll = setInterval(() => void this.refresh(), pollMs);
    this.poll.unref();
    void this.listen();
  }

  /** The pool of the next read. */
  private readonly readPool = (): pg.Pool => (this.replicas.length === 0 ? this.primary : this.replicas[this.nextReplica++ % this.replicas.length]!);

  /** The generation served now (undefined before the first is loaded). */
  get generation(): number | undefined {
    return this.currentGeneration;
  }

  private async listen(): Promise<void> {
    if (this.closed) return this.firstAttemptDone();
    const client = new pg.Client({ connectionString: this.settings.url, connectionTimeoutMillis: this.settings.connectTimeoutMs, keepAlive: true, application_name: 'hsds-org-api listener' });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel === PUBLISH_CHANNEL && message.payload !== undefined && /^\d+$/.test(message.payload)) this.follow(Number(message.payload));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${PUBLISH_CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      this.firstAttemptDone();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      this.firstAttemptDone();
      return;
    }
    this.listener = client;
    if (this.outage) this.log.info('database reachable again');
    this.outage = false;
    await this.refresh();
    await this.following;
    this.firstAttemptDone();
  }

  private lost(client: pg.Client, error?: unknown): void {
    if (this.listener === client) this.listener = undefined;
    client.removeAllListeners('end');
    client.on('error', () => {});
    void client.end().catch(() => {});
    if (this.closed || this.reconnect !== undefined) return;
    if (this.current === undefined) this.notReady = 'the database is not reachable';
    if (!this.outage) this.log.error(`lost the database connection (${error instanceof Error ? error.message : 'closed'}); reconnecting`);
    this.outage = true;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      void this.listen();
    }, RECONNECT_MS);
  }

  /** Reads the live pointer and follows it. */
  private async refresh(): Promise<void> {
    if (this.closed) return;
    try {
      const [row] = await query<{ generation: string | null }>(this.primary, 'SELECT generation FROM hsds.live');
      if (row?.generation == null) {
        this.notReady = 'no dataset has been published to this database yet';
        return;
      }
      this.follow(Number(row.generation));
    } catch (error) {
      this.problem(`cannot read the live pointer: ${(error as Error).message}`);
      // Not the driver's words: /readyz is public.
      if (this.current === undefined) this.notReady = 'the database is not reachable, or not migrated';
    }
  }

  /** Logs a problem once, not again every poll while it lasts. */
  private problem(message: string): void {
    if (message === this.lastProblem) return;
    this.lastProblem = message;
    this.log.error(message);
  }

  /** Switches to a generation (one switch at a time, in the order they were asked for). */
  private follow(generation: number): void {
    this.following = this.following.then(async () => {
      if (this.closed || generation === this.currentGeneration) return;
      try {
        await this.awaitReplicas(generation);
        const facts = await generationFacts(this.readPool(), generation);
        if (this.closed) return;
        this.current = new PostgresStore(this.readPool, facts);
        this.currentGeneration = generation;
        this.lastProblem = undefined;
        this.log.info(`now serving dataset ${facts.info.version} (generation ${generation})`);
      } catch (error) {
        this.problem(`cannot open generation ${generation}: ${(error as Error).message}`);
        if (this.current === undefined) this.notReady = `cannot open generation ${generation}`;
      }
    });
  }

  /** Replicas lag behind the primary: wait (a while) until each of them has the generation. */
  private async awaitReplicas(generation: number): Promise<void> {
    const deadline = Date.now() + REPLICA_WAIT_MS;
    for (const replica of this.replicas) {
      while (Date.now() < deadline) {
        const [row] = await query<{ generation: string | null }>(replica, 'SELECT generation FROM hsds.live').catch(() => [undefined]);
        if (row?.generation != null && Number(row.generation) >= generation) break;
        await sleep(50);
      }
    }
  }

  acquire(): StoreLease {
    return { store: this.current ?? this.unavailable, release: () => {} };
  }

  async readiness(): Promise<Readiness> {
    if (this.current === undefined) return { ready: false, reason: this.notReady };
    try {
      await query(this.readPool(), 'SELECT 1');
    } catch {
      return { ready: false, reason: 'the database is not reachable' };
    }
    return { ready: true, version: (await this.current.info()).version };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.poll);
    clearTimeout(this.reconnect);
    const listener = this.listener;
    this.listener = undefined;
    if (listener !== undefined) {
      listener.removeAllListeners('end');
      await listener.end().catch(() => {});
    }
    await Promise.all([this.primary, ...this.replicas].map(endPool));
  }
}
