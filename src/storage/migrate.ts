/**
 * Migration of the stored bytes between the file system and S3 (`npm run storage:migrate -- --to s3`,
 * docs/deployment.md "Moving the bytes to S3").
 *
 * Every resource (content store) and representation (cache store) is copied path to path — the rows
 * keep their storage paths — and verified: the bytes sent hash to the resource's recorded MD5, and the
 * copy read back hashes to the same. Each verified copy is recorded (`storage_migration_copy`), so a
 * run killed midway goes on where it stopped. While the migration to a backend is recorded and not
 * switched, processes configured for that backend read what they miss from the other one
 * (stores.ts, FallbackStore): reads go on throughout. `--switch` (once every process runs on the new
 * backend) copies what is left and records the switch; from then on nothing is read from the old store.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import { transferFile, type Stores } from './stores.js';
import { StoredFileUnavailableError, type ByteStore } from './store.js';

export type Backend = 'fs' | 's3';

export interface MigrationReport {
  /** files copied and verified in this run, per kind */
  resources: number;
  representations: number;
  /** files found in the target already (written there by a process on the new backend) */
  alreadyThere: number;
  /** rows whose bytes are in neither store: they block the switch */
  missing: string[];
  switched: boolean;
}

const kinds = [
  { kind: 'resource', table: 'resource', store: 'contentStore', md5: 'md5' },
  { kind: 'representation', table: 'representation', store: 'cacheStore', md5: 'null' },
] as const;

/** Whether a migration to `backend` is recorded and not switched yet (the stores' read fallback asks). */
export async function migrationUnderWay(em: EntityManager, backend: Backend): Promise<boolean> {
  const rows = await em.getConnection().execute<unknown[]>('select 1 from storage_migration where target = ? and switched_at is null', [backend]);
  return rows.length > 0;
}

/** Rows copied per batch: one query for the next files to copy. */
const BATCH = 100;

export async function migrateStorage(
  em: EntityManager,
  from: Stores,
  to: Stores,
  target: Backend,
  options: { switchOver: boolean; logger: Logger },
): Promise<MigrationReport> {
  const connection = em.getConnection();
  // a migration to the other backend is over (or given up): its records go, this one's start or stay
  await connection.execute('delete from storage_migration where target <> ?', [target]);
  await connection.execute('insert into storage_migration (target) values (?) on conflict (target) do nothing', [target]);
  const report: MigrationReport = { resources: 0, representations: 0, alreadyThere: 0, missing: [], switched: false };
  for (const { kind, table, store, md5 } of kinds) {
    const failed: string[] = [];
    for (;;) {
      const rows = await connection.execute<{ id: string; storage_path: string; file_size: string | number; md5: string | null }[]>(
        `select t.id, t.storage_path, t.file_size, ${md5} as md5 from ${table} t
          where not exists (select 1 from storage_migration_copy c where c.target = ? and c.kind = ? and c.id = t.id)
            and t.id not in (select jsonb_array_elements_text(?::jsonb))
          order by t.id limit ?`,
        [target, kind, JSON.stringify(failed), BATCH],
      );
      if (rows.length === 0) break;
      for (const row of rows) {
        const size = Number(row.file_size);
        const outcome = await copyOne(from[store], to[store], row.storage_path, size, row.md5);
        if (outcome === 'missing') {
          // deleted meanwhile, or lost: only a row still there counts
          const [still] = await connection.execute<unknown[]>(`select 1 from ${table} where id = ?`, [row.id]);
          if (still) report.missing.push(`${kind} ${row.id} (${row.storage_path})`);
          failed.push(row.id);
          continue;
        }
        await connection.execute('insert into storage_migration_copy (target, kind, id) values (?, ?, ?) on conflict do nothing', [target, kind, row.id]);
        if (outcome === 'alreadyThere') report.alreadyThere++;
        else if (kind === 'resource') report.resources++;
        else report.representations++;
      }
      options.logger.info({ kind, resources: report.resources, representations: report.representations }, 'storage migration: progress');
    }
  }
  if (options.switchOver && report.missing.length === 0) {
    await connection.execute('update storage_migration set switched_at = now() where target = ? and switched_at is null', [target]);
    report.switched = true;
  }
  return report;
}

/** The bytes at `storagePath` copied and verified; 'alreadyThere' when the target has them (verified) and the source not. */
async function copyOne(from: ByteStore, to: ByteStore, storagePath: string, size: number, recordedMd5: string | null): Promise<'copied' | 'alreadyThere' | 'missing'> {
  let sent: string;
  try {
    sent = await transferFile(from, storagePath, size, to, storagePath);
  } catch (error) {
    if (!(error instanceof StoredFileUnavailableError)) throw error;
    const there = await md5Of(to, storagePath, size);
    if (there === undefined || (recordedMd5 !== null && there !== recordedMd5)) return 'missing';
    return 'alreadyThere';
  }
  const copied = await md5Of(to, storagePath, size);
  const expected = recordedMd5 ?? sent;
  if (sent !== expected || copied !== expected) {
    await to.remove(storagePath);
    throw new Error(`${storagePath}: MD5 ${copied ?? 'of a missing copy'} (sent ${sent}) where ${expected} was expected: not copied`);
  }
  return 'copied';
}

/** The MD5 of a stored file as read back, or undefined when it is missing or of another size. */
async function md5Of(store: ByteStore, storagePath: string, size: number): Promise<string | undefined> {
  let file;
  try {
    file = await store.open(storagePath, size);
  } catch (error) {
    if (error instanceof StoredFileUnavailableError) return undefined;
    throw error;
  }
  try {
    const hash = createHash('md5');
    for await (const chunk of await file.stream()) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } finally {
    await file.close();
  }
}
