import pg from 'pg';
import type { Logger } from '../../logger.js';
import { pubSub, stoppingWith } from '../../graphql/pubsub.js';
import { jobChangesChannel, type JobState } from './records.js';

/** One change of a job record as announced. */
export interface JobChange {
  id: string;
  state: JobState;
  percentage: number;
}

/** The in-process topic of one job's changes. */
export const jobTopic = (jobId: string) => `job:${jobId}`;

/**
 * Relays the job record changes of every process (Postgres NOTIFY, sent by the statement that changed
 * the record) to the in-process pub/sub of GraphQL subscriptions. One connection per process, opened
 * with the first subscriber; when it breaks, it is opened again and subscribers are told to re-read.
 */
export class JobChanges {
  private client?: Promise<pg.Client>;
  private readonly watched = new Map<string, number>();

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  private connect(): Promise<pg.Client> {
    return (this.client ??= (async () => {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      client.on('notification', (message) => {
        const change = JSON.parse(message.payload ?? '{}') as JobChange;
        if (this.watched.has(change.id)) pubSub.publish(jobTopic(change.id), change);
      });
      client.on('error', (error) => {
        this.logger.warn({ err: error }, 'job change listener lost its connection');
        this.client = undefined;
        client.end().catch(() => undefined);
        if (this.watched.size > 0) {
          // changes may have been missed meanwhile: subscribers re-read the record
          void this.connect().then(
            () => [...this.watched.keys()].forEach((id) => pubSub.publish(jobTopic(id), { id })),
            () => undefined,
          );
        }
      });
      await client.connect();
      await client.query(`listen ${jobChangesChannel}`);
      return client;
    })().catch((error: unknown) => {
      this.client = undefined;
      throw error;
    }));
  }

  /**
   * The changes of `jobId` from now on (a change without state after a reconnection: re-read the
   * record). Listening has begun when the promise resolves; `return()` on the iterator stops it.
   */
  async watch(jobId: string): Promise<AsyncIterableIterator<Partial<JobChange> & { id: string }>> {
    this.watched.set(jobId, (this.watched.get(jobId) ?? 0) + 1);
    const changes = pubSub.subscribe(jobTopic(jobId)) as AsyncIterableIterator<JobChange>;
    try {
      await this.connect();
    } catch (error) {
      this.unwatch(jobId);
      await changes.return?.();
      throw error;
    }
    return stoppingWith(changes, () => this.unwatch(jobId));
  }

  private unwatch(jobId: string) {
    const count = (this.watched.get(jobId) ?? 1) - 1;
    if (count > 0) this.watched.set(jobId, count);
    else this.watched.delete(jobId);
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await (await client?.catch(() => undefined))?.end();
  }
}
