import { MikroORM, type Options } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from '../logger.js';
import { answerInCallbackForm } from './callback-queries.js';
import { statementTimeouts } from './statement-timeout.js';
import { Migration20261122000001Initial } from './migrations/Migration20261122000001Initial.js';
import { Migration20261122210000LoginLimits } from './migrations/Migration20261122210000LoginLimits.js';
import { Migration20261122210001UserNamesCaseInsensitive } from './migrations/Migration20261122210001UserNamesCaseInsensitive.js';
import { Migration20261122220000RepairMediaTypes } from './migrations/Migration20261122220000RepairMediaTypes.js';
import { Migration20261122240000Jobs } from './migrations/Migration20261122240000Jobs.js';
import { Migration20261122250000SearchIndexes } from './migrations/Migration20261122250000SearchIndexes.js';
import { Migration20261122270000EntryResourceFields } from './migrations/Migration20261122270000EntryResourceFields.js';
import { Migration20261122270001EntryVisibleCounts } from './migrations/Migration20261122270001EntryVisibleCounts.js';
import { Migration20261122260000Policies } from './migrations/Migration20261122260000Policies.js';
import { Migration20261122260001StatisticsIndex } from './migrations/Migration20261122260001StatisticsIndex.js';
import { Migration20261122290500StatisticsCoveringIndex } from './migrations/Migration20261122290500StatisticsCoveringIndex.js';
import { Migration20261122280000ResourceText } from './migrations/Migration20261122280000ResourceText.js';
import { Migration20261123010000DeepCheckReports } from './migrations/Migration20261123010000DeepCheckReports.js';
import { Migration20261123020000RepositoryChanges } from './migrations/Migration20261123020000RepositoryChanges.js';
import { Migration20261123030000TextExtractionQueue } from './migrations/Migration20261123030000TextExtractionQueue.js';
import { Migration20261123040000SearchPageIndexes } from './migrations/Migration20261123040000SearchPageIndexes.js';
import { Migration20261123040001EntryVisibleTags } from './migrations/Migration20261123040001EntryVisibleTags.js';
import { Migration20261123050000EntryVisibleWords } from './migrations/Migration20261123050000EntryVisibleWords.js';
import { Migration20261123060000HiddenEntryWords } from './migrations/Migration20261123060000HiddenEntryWords.js';
import { Migration20261123070000RepositoryNamesIgnoreCase } from './migrations/Migration20261123070000RepositoryNamesIgnoreCase.js';
import { Migration20261123120000RepositoryWordIndexes } from './migrations/Migration20261123120000RepositoryWordIndexes.js';
import { Migration20261123170000EntryVisibleWordCounts } from './migrations/Migration20261123170000EntryVisibleWordCounts.js';
import { Migration20261124010000JobTurns } from './migrations/Migration20261124010000JobTurns.js';
import { Migration20261127010000Groups } from './migrations/Migration20261127010000Groups.js';
import { Migration20261127020000Acls } from './migrations/Migration20261127020000Acls.js';
import { Migration20261128010000Events } from './migrations/Migration20261128010000Events.js';
import { Migration20261128020000EventNotifications } from './migrations/Migration20261128020000EventNotifications.js';
import { Migration20261128030000Webhooks } from './migrations/Migration20261128030000Webhooks.js';
import { Migration20261128040000ExtractionNotes } from './migrations/Migration20261128040000ExtractionNotes.js';
import { Migration20261128050000AuditIndexes } from './migrations/Migration20261128050000AuditIndexes.js';
import { Migration20261128060000StorageMigration } from './migrations/Migration20261128060000StorageMigration.js';
import { Migration20261128080000StatisticsTallies } from './migrations/Migration20261128080000StatisticsTallies.js';
import { Migration20261128150000EventTallies } from './migrations/Migration20261128150000EventTallies.js';
import { Migration20261128151000WordCountsPerAcl } from './migrations/Migration20261128151000WordCountsPerAcl.js';
import { Migration20261128154000PreviewSweep } from './migrations/Migration20261128154000PreviewSweep.js';
import { Migration20261129071000AclChangesPerStatement } from './migrations/Migration20261129071000AclChangesPerStatement.js';
import { Migration20261129102000VisibleChildrenIndex } from './migrations/Migration20261129102000VisibleChildrenIndex.js';
import { Migration20261129130000EntryVisiblePostings } from './migrations/Migration20261129130000EntryVisiblePostings.js';
import { Migration20261129161000UnchangedWordsKept } from './migrations/Migration20261129161000UnchangedWordsKept.js';
import { Migration20261207100000QueuedPdfMark } from './migrations/Migration20261207100000QueuedPdfMark.js';
import { Migration20261207150000EventChronicleKnown } from './migrations/Migration20261207150000EventChronicleKnown.js';
import { Migration20261207170000EntryVisibleTagSets } from './migrations/Migration20261207170000EntryVisibleTagSets.js';
import { Migration20261207180000EventTallyPending } from './migrations/Migration20261207180000EventTallyPending.js';
import { Migration20261207190000WordCountPending } from './migrations/Migration20261207190000WordCountPending.js';
import { Migration20261207200000AclTally } from './migrations/Migration20261207200000AclTally.js';

export type Orm = MikroORM;

/** Every migration, in order. Schema changes are migrations, never schema sync. */
export const migrationsList = [
  { name: 'Migration20261122000001Initial', class: Migration20261122000001Initial },
  { name: 'Migration20261122210000LoginLimits', class: Migration20261122210000LoginLimits },
  { name: 'Migration20261122210001UserNamesCaseInsensitive', class: Migration20261122210001UserNamesCaseInsensitive },
  { name: 'Migration20261122220000RepairMediaTypes', class: Migration20261122220000RepairMediaTypes },
  { name: 'Migration20261122240000Jobs', class: Migration20261122240000Jobs },
  { name: 'Migration20261122250000SearchIndexes', class: Migration20261122250000SearchIndexes },
  { name: 'Migration20261122260000Policies', class: Migration20261122260000Policies },
  { name: 'Migration20261122260001StatisticsIndex', class: Migration20261122260001StatisticsIndex },
  { name: 'Migration20261122270000EntryResourceFields', class: Migration20261122270000EntryResourceFields },
  { name: 'Migration20261122270001EntryVisibleCounts', class: Migration20261122270001EntryVisibleCounts },
  { name: 'Migration20261122280000ResourceText', class: Migration20261122280000ResourceText },
  { name: 'Migration20261122290500StatisticsCoveringIndex', class: Migration20261122290500StatisticsCoveringIndex },
  { name: 'Migration20261123010000DeepCheckReports', class: Migration20261123010000DeepCheckReports },
  { name: 'Migration20261123020000RepositoryChanges', class: Migration20261123020000RepositoryChanges },
  { name: 'Migration20261123030000TextExtractionQueue', class: Migration20261123030000TextExtractionQueue },
  { name: 'Migration20261123040000SearchPageIndexes', class: Migration20261123040000SearchPageIndexes },
  { name: 'Migration20261123040001EntryVisibleTags', class: Migration20261123040001EntryVisibleTags },
  { name: 'Migration20261123050000EntryVisibleWords', class: Migration20261123050000EntryVisibleWords },
  { name: 'Migration20261123060000HiddenEntryWords', class: Migration20261123060000HiddenEntryWords },
  { name: 'Migration20261123070000RepositoryNamesIgnoreCase', class: Migration20261123070000RepositoryNamesIgnoreCase },
  { name: 'Migration20261123120000RepositoryWordIndexes', class: Migration20261123120000RepositoryWordIndexes },
  { name: 'Migration20261123170000EntryVisibleWordCounts', class: Migration20261123170000EntryVisibleWordCounts },
  { name: 'Migration20261124010000JobTurns', class: Migration20261124010000JobTurns },
  { name: 'Migration20261127010000Groups', class: Migration20261127010000Groups },
  { name: 'Migration20261127020000Acls', class: Migration20261127020000Acls },
  { name: 'Migration20261128010000Events', class: Migration20261128010000Events },
  { name: 'Migration20261128020000EventNotifications', class: Migration20261128020000EventNotifications },
  { name: 'Migration20261128030000Webhooks', class: Migration20261128030000Webhooks },
  { name: 'Migration20261128040000ExtractionNotes', class: Migration20261128040000ExtractionNotes },
  { name: 'Migration20261128050000AuditIndexes', class: Migration20261128050000AuditIndexes },
  { name: 'Migration20261128060000StorageMigration', class: Migration20261128060000StorageMigration },
  { name: 'Migration20261128080000StatisticsTallies', class: Migration20261128080000StatisticsTallies },
  { name: 'Migration20261128150000EventTallies', class: Migration20261128150000EventTallies },
  { name: 'Migration20261128151000WordCountsPerAcl', class: Migration20261128151000WordCountsPerAcl },
  { name: 'Migration20261128154000PreviewSweep', class: Migration20261128154000PreviewSweep },
  { name: 'Migration20261129071000AclChangesPerStatement', class: Migration20261129071000AclChangesPerStatement },
  { name: 'Migration20261129102000VisibleChildrenIndex', class: Migration20261129102000VisibleChildrenIndex },
  { name: 'Migration20261129130000EntryVisiblePostings', class: Migration20261129130000EntryVisiblePostings },
  { name: 'Migration20261129161000UnchangedWordsKept', class: Migration20261129161000UnchangedWordsKept },
  { name: 'Migration20261207100000QueuedPdfMark', class: Migration20261207100000QueuedPdfMark },
  { name: 'Migration20261207150000EventChronicleKnown', class: Migration20261207150000EventChronicleKnown },
  { name: 'Migration20261207170000EntryVisibleTagSets', class: Migration20261207170000EntryVisibleTagSets },
  { name: 'Migration20261207180000EventTallyPending', class: Migration20261207180000EventTallyPending },
  { name: 'Migration20261207190000WordCountPending', class: Migration20261207190000WordCountPending },
  { name: 'Migration20261207200000AclTally', class: Migration20261207200000AclTally },
];

export interface OrmOptions {
  /** the entities its units of work read and write (src/modules/entities.ts); none: SQL and migrations only */
  entities?: Options['entities'];
  poolMax?: number;
}

export async function createOrm(clientUrl: string, logger: Logger, { entities = [], poolMax = 20 }: OrmOptions = {}): Promise<Orm> {
  return MikroORM.init({
    clientUrl,
    entities,
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    subscribers: [statementTimeouts],
    migrations: { migrationsList, snapshot: false, transactional: true, allOrNothing: true, silent: true },
    // an idle connection is kept 5 minutes, not pg-pool's 10 s: a new one costs the first request after a
    // pause ≈ 10 ms (connecting, and the backend's catalog caches filling again), docs/benchmarks.md
    pool: { min: 0, max: poolMax, idleTimeoutMillis: 300_000 },
    // every connection answers in pg's callback form: the promise form's results outlived young-generation collections (callback-queries.ts)
    driverOptions: { onPoolCreated: (pool: pg.Pool) => void pool.on('connect', answerInCallbackForm) },
    allowGlobalContext: false,
    debug: false,
    logger: (message) => logger.debug({ orm: message }, 'orm'),
  });
}

export async function migrate(orm: Orm): Promise<void> {
  await orm.migrator.up();
}
