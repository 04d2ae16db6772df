import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../context.js';
import { checkLimits, type RepositoryRecord } from '../repositories/operations.js';

export type CheckStatus = 'ok' | 'failed';

/** Spec "Check responses": one part of a check. */
export interface CheckResultEntry {
  _id: string;
  name: string;
  checkStatus: CheckStatus;
  message: string;
  details: string | null;
  detailsAsMarkdown: boolean;
}

export interface CheckResult {
  _id: string;
  checkStatus: CheckStatus;
  message: string;
  duration: number;
  elapsedTimeInMs: number;
  entries: CheckResultEntry[];
}

type Part = { ok: boolean; message: string; details?: string };

/** One part, timed; whatever it throws is its own failure (it never fails the other parts). */
async function part(name: string, run: () => Promise<Part>): Promise<CheckResultEntry> {
  const started = performance.now();
  let result: Part;
  try {
    result = await run();
  } catch (error) {
    result = { ok: false, message: `${name} failed: ${(error as Error).message}` };
  }
  const took = `${Math.round(performance.now() - started)} ms`;
  return {
    _id: randomUUID(),
    name,
    checkStatus: result.ok ? 'ok' : 'failed',
    message: result.message,
    details: result.details ? `${result.details}; ${took}` : took,
    detailsAsMarkdown: false,
  };
}

/**
 * Spec endpoint 10: each part the spec names, in its order, each with its own status; `ok` only when
 * all are. The parts run together, so a slow one does not hold the others up.
 */
export async function connectionCheck(em: EntityManager, services: Services, repository: RepositoryRecord): Promise<CheckResult> {
  const started = performance.now();
  const { config, contentStore, cacheStore, jobs } = services;
  const entries = await Promise.all([
    part('database connection configuration', async () => {
      const [row] = await em.getConnection().execute<{ version: string; migrations: string }[]>(
        `select current_setting('server_version') as version, (select count(*) from mikro_orm_migrations)::text as migrations`,
      );
      return { ok: true, message: 'the database answers', details: `PostgreSQL ${row?.version}, ${row?.migrations} migrations applied` };
    }),
    part('content storage check', async () => contentStore.checkWritable()),
    part('cache storage check', async () => cacheStore.checkWritable()),
    part('content configuration check', async () => {
      // the totals triggers keep (Migration20261122270001EntryVisibleCounts), not a count of every entry and version on each check
      const [row] = await em
        .getConnection()
        .execute<{ entries: string }[]>('select coalesce(sum(n), 0)::text as entries from entry_visible_count where repository_id = ?', [repository.id]);
      return { ok: true, message: `repository '${repository.name}' (${repository.technicalName}, ${repository.type}) is reachable`, details: `${row?.entries} visible entries` };
    }),
    part('conversion check', async () => {
      checkLimits(config, repository.limits);
      return {
        ok: true,
        message: 'the repository limits are within the conversion limits',
        details: `repository limits ${JSON.stringify(repository.limits)}; CONV_MAX_INPUT_FILE_SIZE ${config.CONV_MAX_INPUT_FILE_SIZE}, CONV_MAX_TOTAL_INPUT_FILE_SIZE ${config.CONV_MAX_TOTAL_INPUT_FILE_SIZE}, CONV_MAX_NUMBER_OF_INPUT_FILES ${config.CONV_MAX_NUMBER_OF_INPUT_FILES}`,
      };
    }),
    part('async configuration check', async () => jobs.check()),
    part('fulltext configuration check', async () => ({
      ok: true,
      message: repository.fullTextEnabled ? 'full-text search is enabled for the repository' : 'full-text search is disabled for the repository',
      details: config.MEILISEARCH_URL ? `index: ${config.MEILISEARCH_URL}` : 'index: the database (no MEILISEARCH_URL)',
    })),
  ]);
  const failed = entries.filter((entry) => entry.checkStatus !== 'ok');
  const elapsed = Math.round(performance.now() - started);
  return {
    _id: randomUUID(),
    checkStatus: failed.length === 0 ? 'ok' : 'failed',
    message: failed.length === 0 ? `repository '${repository.name}': every check passed` : `repository '${repository.name}': failed: ${failed.map((entry) => entry.name).join(', ')}`,
    duration: elapsed,
    elapsedTimeInMs: elapsed,
    entries,
  };
}
