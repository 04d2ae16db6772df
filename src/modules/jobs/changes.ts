import pg from 'pg';
import type { Logger } from '../../logger.js';
import { pubSub, stoppingWith } from '../../graphql/pubsub.js';
import { jobChangesChannel, jobStatesChannel, type JobState } from './records.js';

/** One change of a job record as announced. */
export interface JobChange {
  id: string;
  state: JobState;
  percentage: number;
}

/** Which changes of a job a watcher hears: every change (subscriptions), or its changes of state only (a running job's cancellation). */
export type JobChangeKind = 'all' | 'states';

const channels: Record<JobChangeKind, string> = { all: jobChangesChannel, states: jobStatesChannel };

/** The in-process topic of one job's changes (of one kind). */
export const jobTopic = (jobId: string, kind: JobChangeKind = 'all') => (kind === 'all' ? `job:${jobId}` : `job-state:${jobId}`);

/**
 * Relays the job record changes of every process (Postgres NOTIFY, sent by the statement that changed
 * the record) to the in-process pub/sub of GraphQL subscriptions. One connection per process, opened
 * with the first watcher; it listens to a kind's channel from that kind's first watcher on (a worker
 * whose process has no subscription hears its jobs' changes of state, not their progress page by page).
 * When it breaks, it is opened again and watchers are told to re-read.
 */
export class JobChanges {
  private client?: Promise<pg.Client>;
  /** the channels the connection listens to (or is starting to) */
  private readonly listening = new Map<JobChangeKind, Promise<unknown>>();
  private readonly watched: Record<JobChangeKind, Map<string, number>> = { all: new Map(), states: new Map() };

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  private connect(): Promise<pg.Client> {
    return (this.client ??= (async () => {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      client.on('notification', (message) => {
        const kind: JobChangeKind = message.channel === jobStatesChannel ? 'states' : 'all';
        const change = JSON.parse(message.payload ?? '{}') as JobChange;
        if (this.watched[kind].has(change.id)) pubSub.publish(jobTopic(change.id, kind), change);
      });
      client.on('error', (error) => {
        this.logger.warn({ err: error }, 'job change listener lost its connection');
        this.client = undefined;
        this.listening.clear();
        client.end().catch(() => undefined);
        const kinds = (Object.keys(this.watched) as JobChangeKind[]).filter((kind) => this.watched[kind].size > 0);
        if (kinds.length > 0) {
          // changes may have been missed meanwhile: watchers re-read the record
          void Promise.all(kinds.map((kind) => this.listen(kind))).then(
            () => kinds.forEach((kind) => [...this.watched[kind].keys()].forEach((id) => pubSub.publish(jobTopic(id, kind), { id }))),
            () => undefined,
          );
        }
      });
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      this.client = undefined;
      throw error;
    }));
  }

  /** Listens to the channel of `kind` on the connection (opened if need be). */
  private async listen(kind: JobChangeKind): Promise<void> {
    const client = await this.connect();
    let listening = this.listening.get(kind);
    if (!listening) {
      listening = client.query(`listen ${channels[kind]}`);
      this.listening.set(kind, listening);
      listening.catch(() => this.listening.get(kind) === listening && this.listening.delete(kind));
    }
    await listening;
  }

  /**
   * The changes of `jobId` (of `kind`) from now on (a change without state after a reconnection:
   * re-read the record). Listening has begun when the promise resolves; `return()` on the iterator stops it.
   */
  async watch(jobId: string, kind: JobChangeKind = 'all'): Promise<AsyncIterableIterator<Partial<JobChange> & { id: string }>> {
    const watched = this.watched[kind];
    watched.set(jobId, (watched.get(jobId) ?? 0) + 1);
    const changes = pubSub.subscribe(jobTopic(jobId, kind)) as AsyncIterableIterator<JobChange>;
    try {
      await this.listen(kind);
    } catch (error) {
      this.unwatch(jobId, kind);
      await changes.return?.();
      throw error;
    }
    return stoppingWith(changes, () => this.unwatch(jobId, kind));
  }

  private unwatch(jobId: string, kind: JobChangeKind) {
    const watched = this.watched[kind];
    const count = (watched.get(jobId) ?? 1) - 1;
    if (count > 0) watched.set(jobId, count);
    else watched.delete(jobId);
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.listening.clear();
    await (await client?.catch(() => undefined))?.end();
  }
}
