import { numbered } from '../../db/placeholders.js';
import type { EntryScope } from '../entries/scope.js';
import { textQuery } from '../fulltext/query.js';
import { textIndexOf } from '../fulltext/text-index.js';
import { visibleEntries } from '../access/policy.js';
import {
  checkPaging,
  onlyVisibleByDefault,
  pageOf,
  runPage,
  runSearchStatements,
  type RunStatement,
  type EntriesPage,
  type SearchOptions,
  type SearchScope,
  type Statement,
} from './entry-query.js';

/**
 * A search that is only a full-text match, answered from entry_visible_words
 * (Migration20261123050000EntryVisibleWords: the default-visible entries' name and text words under
 * one GIN index, narrow rows): its page, relevance and count without joining every match back to
 * `entry`. It applies where that table holds exactly what the search sees: the Postgres text index
 * (with Meilisearch the text side is Meilisearch's), the default visibility of a whole repository, and
 * the order of the search itself (no `orderBy`). Everything else runs the general query, with the same
 * answers.
 */
export function visibleWordsAnswer(scope: EntryScope, options: SearchOptions): boolean {
  return textIndexOf(scope.services.config).name === 'postgres' && options.orderBy === undefined && onlyVisibleByDefault(options) && options.versionStatus === undefined;
}

/** How a words search orders: by relevance (by-text), or by creation like every search without `orderBy`. */
export type WordsOrder = 'relevance' | 'created';

/**
 * Bounded relevance (docs/search.md, "Relevance"): by-text ranks the newest this many matches and lists
 * the others after them, newest first. Ranking every match grows with the matches — 306 ms of SQL for
 * a word in 40 % of 1,000,000 contents — where the newest 1,000 of them are found (from the word's
 * postings, or by walking the creation index) about as fast at any size; Lucene's top-k and
 * Meilisearch's bounded hits (`maxTotalHits`, 1,000 by default) bound the work so too. `count` stays exact.
 */
export const relevanceCandidates = 1_000;

/** The statements of a words search (which run depends on the order and on the count). */
export interface VisibleWordsQuery {
  limit: number;
  offset: number;
  /**
   * for a query of one word (`word`), the matches the caller may read counted in
   * entry_visible_word_count and the pending rows that hold the word (`n`), and everyone's (`found`,
   * what the GIN index finds), the count rows' sum of `summed` rows, `kept` of them one per ACL and
   * type, and the repository's `pending` rows (Migration20261207190000WordCountPending); null for any
   * other query. And the visible entries of the repository (`visible`, from entry_visible_count): see `MatchSpread`.
   */
  wordCount: Statement;
  /** the matches (`n`), each visited */
  count: Statement;
  /** creation order, many matches: the page's ids (`id`, for runPage), walking the creation index and checking each row's words in place */
  walk: Statement;
  /** creation order, few matches: the page's ids (`id`, for runPage) from the matches (GIN index) sorted */
  sorted: Statement;
  /** relevance: the page's ids (`entry_id`) among the newest `relevanceCandidates` matches, ranked (empty past them) */
  rankedNewest: (spread: MatchSpread) => Statement;
  /** relevance: the page's ids past the newest `relevanceCandidates` matches, newest first; undefined when the page ends before them */
  newestAfterRanked: (spread: MatchSpread) => Statement | undefined;
}

/**
 * How a search's matches lie among the `visible` entries of the repository: `matches` the caller may
 * read (undefined until counted: a query of several words, counted beside its page), `found` by the
 * GIN index for everyone (as many for an administrator; for a caller who may read less, the word's
 * count over every ACL).
 */
export interface MatchSpread {
  matches: number | undefined;
  found: number;
  visible: number;
  /** the query's one word (`wordCount`), whose postings list its matches newest first; undefined for any other query */
  word?: string;
}

/** The row of `wordCount`. */
export interface WordCounts {
  word: string | null;
  n: string | null;
  found: string | null;
  summed: string | null;
  kept: string | null;
  pending: string | null;
  visible: string;
}

/** The spread of a search's `matches` (undefined: not counted yet) by its `wordCount` row. */
export const matchSpread = (counts: WordCounts, matches: number | undefined): MatchSpread => ({
  matches,
  found: counts.found === null ? (matches ?? 0) : Number(counts.found),
  visible: Number(counts.visible),
  word: counts.word ?? undefined,
});

/**
 * Whether walking the creation index finds `rows` of the matches sooner than sorting every match the
 * GIN index finds: the walk visits about rows × visible / matches entries, the sort `found`. Unknown
 * matches: sorted.
 */
const walks = ({ matches, found, visible }: MatchSpread, rows: number) => matches !== undefined && rows * visible < matches * found;

/**
 * Whether walking the word's postings (Migration20261129130000EntryVisiblePostings) newest first finds
 * `rows` of the matches sooner than the other ways: it visits about rows × found / matches postings,
 * each with a lookup of its words row by key (for a caller who may not read them all, whether it may).
 * At 1,000,000 contents (docs/benchmarks.md) a posting so costs about 3.2 µs, a match sorted 1.6–2.4 µs,
 * a row of the creation walk 0.6–0.8 µs (the rows lie on the heap in creation order). So: the
 * postings when the caller's matches are at least twice the rows (with fewer, most of them are needed
 * and sorting them is cheaper) and the word is in fewer than a quarter of the visible entries (a more
 * common one is found sooner by the walk).
 */
const postingCostInWalkedRows = 4;
const posts = ({ matches, found, visible, word }: MatchSpread, rows: number) =>
  word !== undefined && matches !== undefined && matches >= 2 * rows && postingCostInWalkedRows * found < visible;

export function buildVisibleWordsQuery(scope: SearchScope, searchText: string, options: SearchOptions): VisibleWordsQuery {
  const { limit, offset } = checkPaging(options.limit, options.offset);
  const dir = options.orderingDirection === 'desc' ? 'desc' : 'asc';
  const query = textQuery(searchText);
  const typed = (alias: string) => (options.entryType ? ` and ${alias}.entry_type = ?` : '');
  const types = options.entryType ? [options.entryType] : [];
  // what the caller may read (DESIGN §10): its ACLs and what it owns, on the words' own rows
  const allowed = visibleEntries(scope.principal, scope.repository, scope.readable);
  const readable = allowed.wholeRepository ? '' : ' and (w.acl_id = any(?::bigint[]) or w.owner = ?)';
  const readableParams = allowed.wholeRepository ? [] : [scope.readable!.ids, scope.principal.userName];
  const where = `w.repository_id = ? and w.words @@ (${query.sql})${typed('w')}${readable}`;
  const whereParams = [scope.repository.id, ...query.params, ...types, ...readableParams];
  const count = { sql: numbered(`select count(*) as n from entry_visible_words w where ${where}`), params: whereParams };
  // a caller who may not read everything: the counts of its readable ACLs, and what it owns under others
  // (an index range of entry_visible_owner_idx, joined to its words), as countFromTotals counts
  const ownedElsewhere = allowed.wholeRepository
    ? { sql: '', params: [] }
    : {
        sql: ` + (select count(*) from entry e join entry_visible_words w on w.entry_id = e.id
                   where e.repository_id = ? and e.owner = ? and not (e.acl_id = any(?::bigint[])) and e.is_latest and e.active and e.version_status is distinct from 'WORKING_COPY'
                     and w.words @@ (${query.sql})${typed('w')})`,
        params: [scope.repository.id, scope.principal.userName, scope.readable!.ids, ...query.params, ...types],
      };
  const readableCounts = allowed.wholeRepository ? '' : ' filter (where c.acl_id = any(?::bigint[]))';
  const readablePending = allowed.wholeRepository ? '' : ' and p.acl_id = any(?::bigint[])';
  const readableAcls = allowed.wholeRepository ? [] : [scope.readable!.ids];
  // the pending rows: the repository's few (≈ 50 between two roll-ups), each array searched for the word
  const wordCount = {
    sql: numbered(
      `select q.word, counted.n + pending.n${ownedElsewhere.sql} as n, counted.found + pending.found as found, counted.summed, counted.kept, pending.rows as pending,
              (select coalesce(sum(c.n), 0) from entry_visible_count c where c.repository_id = ?${typed('c')}) as visible
         from (select tsquery_single_word(${query.sql}) as word) q
         left join lateral (
           select coalesce(sum(c.n)${readableCounts}, 0) as n, coalesce(sum(c.n), 0) as found, count(*) as summed, count(distinct (c.acl_id, c.entry_type)) as kept
             from entry_visible_word_count c where c.repository_id = ? and c.word = q.word${typed('c')}
         ) counted on q.word is not null
         left join lateral (
           select coalesce(sum(p.n) filter (where q.word = any(p.words)${readablePending}), 0) as n, coalesce(sum(p.n) filter (where q.word = any(p.words)), 0) as found, count(*) as rows
             from entry_visible_word_pending p where p.repository_id = ?${typed('p')}
         ) pending on q.word is not null`,
    ),
    params: [
      ...ownedElsewhere.params,
      scope.repository.id,
      ...types,
      ...query.params,
      ...readableAcls,
      scope.repository.id,
      ...types,
      ...readableAcls,
      scope.repository.id,
      ...types,
    ],
  };
  const creationOrder = `created_at ${dir}, entry_id ${dir} limit ? offset ?`;
  const walk = `select w.entry_id as id from entry_visible_words w where ${where} order by w.created_at ${dir}, w.entry_id ${dir} limit ? offset ?`;
  // materialized: the matches are collected by the GIN index, not found by walking the creation index
  const sorted = `with matches as materialized (select w.entry_id, w.created_at from entry_visible_words w where ${where}) select entry_id as id from matches order by ${creationOrder}`;
  const paged = [...whereParams, limit, offset];
  // The newest matches with their words, from the word's postings, walked or sorted (the same rows
  // each way). Each posting's words row is looked up by its key and checked against the whole search
  // (the `limit 1` keeps the lookup inside the loop over the postings: joined, the planner hashed a
  // scan of every words row for a caller who may not read all of them, docs/benchmarks.md).
  const newest = (spread: MatchSpread, rows: number) =>
    posts(spread, rows)
      ? {
          sql: `select w.entry_id, w.created_at, w.words from entry_visible_posting p
                  cross join lateral (select w.entry_id, w.created_at, w.words from entry_visible_words w where w.entry_id = p.entry_id and ${where} limit 1) w
                 where p.repository_id = ? and p.word = ? order by p.created_at desc, p.entry_id desc limit ? offset ?`,
          params: [...whereParams, scope.repository.id, spread.word],
        }
      : {
          sql: walks(spread, rows)
            ? `select w.entry_id, w.created_at, w.words from entry_visible_words w where ${where} order by w.created_at desc, w.entry_id desc limit ? offset ?`
            : `with matches as materialized (select w.entry_id, w.created_at, w.words from entry_visible_words w where ${where})
               select entry_id, created_at, words from matches order by created_at desc, entry_id desc limit ? offset ?`,
          params: whereParams,
        };
  // ties of relevance in creation order (`orderingDirection`)
  const rankedNewest = (spread: MatchSpread) => {
    const candidates = newest(spread, relevanceCandidates);
    return {
      sql: numbered(`select c.entry_id from (${candidates.sql}) c order by ts_rank(c.words, (${query.sql})) desc, c.created_at ${dir}, c.entry_id ${dir} limit ? offset ?`),
      params: [...candidates.params, relevanceCandidates, 0, ...query.params, Math.max(0, Math.min(limit, relevanceCandidates - offset)), offset],
    };
  };
  const newestAfterRanked = (spread: MatchSpread) => {
    const from = Math.max(offset, relevanceCandidates);
    if (offset + limit <= relevanceCandidates || (spread.matches !== undefined && spread.matches <= from)) return undefined;
    const rows = offset + limit - from;
    const older = newest(spread, from + rows);
    return { sql: numbered(`select c.entry_id from (${older.sql}) c order by c.created_at desc, c.entry_id desc`), params: [...older.params, rows, from] };
  };
  return {
    limit,
    offset,
    wordCount,
    count,
    walk: { sql: numbered(walk), params: paged },
    sorted: { sql: numbered(sorted), params: paged },
    rankedNewest,
    newestAfterRanked,
  };
}

/**
 * The creation-order page: walking the creation index or sorting the matches, whichever visits fewer
 * rows (`walks`). (The planner alone walked the index for a word in 20 of 1,000,000 contents: 455 ms.)
 */
export function creationPage(query: VisibleWordsQuery, spread: MatchSpread): Statement {
  return walks(spread, query.offset + query.limit) ? query.walk : query.sorted;
}

/**
 * Rows of a word's counts past which a search folds them (Migration20261123170000EntryVisibleWordCounts):
 * writes fold now and then, a bulk load of many entries in one transaction leaves one row per entry.
 */
const wordCountRowsToFold = 1_000;
/**
 * Pending rows of a repository's word counts past which a search rolls them up
 * (Migration20261207190000WordCountPending): a change rolls them up now and then, at most once a
 * transaction, so a transaction that changes many entries' words leaves a pending row each.
 */
const pendingRowsToRollUp = 1_000;
/** The statements this process is running in the background (one of each key at a time). */
const runningInBackground = new Set<string>();

/** Runs `statement` on a connection of its own after the search that asked for it (it does not wait); `what` names it in the log. */
function runInBackground(scope: EntryScope, what: string, statement: string, params: unknown[]): void {
  const key = JSON.stringify([statement, params]);
  if (runningInBackground.has(key)) return;
  runningInBackground.add(key);
  scope.em
    .fork()
    .getConnection()
    .execute(statement, params, 'run')
    .catch((error: unknown) => scope.logger.warn({ err: error, params }, `${what} failed`))
    .finally(() => runningInBackground.delete(key));
}

/** The page and count of a full-text-only search from entry_visible_words (see `visibleWordsAnswer`). */
export async function searchVisibleWords(scope: EntryScope, searchText: string, options: SearchOptions, order: WordsOrder): Promise<EntriesPage> {
  const query = buildVisibleWordsQuery(scope, searchText, options);
  const countOf = async (run: RunStatement, statement: Statement) => Number((await run<{ n: string }>(statement))[0]?.n ?? 0);
  return runSearchStatements(scope, async (run, beside) => {
    // one row, whatever the query
    const [counts] = await run<WordCounts>(query.wordCount);
    const wordMatches = counts!.n === null ? undefined : Number(counts!.n);
    const spreadOf = (matches: number | undefined) => matchSpread(counts!, matches);
    if (counts!.word !== null && Number(counts!.summed) - Number(counts!.kept) > wordCountRowsToFold) {
      runInBackground(scope, 'folding the counts of a word', 'select entry_visible_word_count_fold(?, array[?]::text[])', [scope.repository.id, counts!.word]);
    }
    if (Number(counts!.pending) > pendingRowsToRollUp) {
      runInBackground(scope, 'rolling up the pending word counts', 'select entry_visible_word_count_roll_up(?)', [scope.repository.id]);
    }
    if (order === 'created') {
      // counted first: the count is needed for any full page, and it tells which way the page is cheaper
      const matches = wordMatches ?? (await countOf(run, query.count));
      const rows = matches > query.offset ? await runPage(scope, run, creationPage(query, spreadOf(matches))) : [];
      return { rows, count: matches };
    }
    // A query of several words is counted by visiting its matches: beside the page, on a second
    // connection in the same snapshot (the newest matches are then sorted from the GIN index, which
    // visits them too), or first when no such connection is free.
    const countedBeside = wordMatches === undefined ? beside<{ n: string }>(query.count) : undefined;
    const matches = wordMatches ?? (countedBeside ? undefined : await countOf(run, query.count));
    const ids: string[] = [];
    if (query.offset < relevanceCandidates) ids.push(...(await run<{ entry_id: string }>(query.rankedNewest(spreadOf(matches)))).map((r) => r.entry_id));
    const after = query.newestAfterRanked(spreadOf(matches));
    if (after) ids.push(...(await run<{ entry_id: string }>(after)).map((r) => r.entry_id));
    const rows = ids.length === 0 ? [] : await run<Record<string, unknown>>(pageOf(scope, ids));
    return { rows, count: matches ?? Number((await countedBeside!)[0]?.n ?? 0) };
  });
}
