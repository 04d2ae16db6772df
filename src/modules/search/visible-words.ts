import { numbered } from '../../db/placeholders.js';
import type { EntryScope } from '../entries/scope.js';
import { textQuery } from '../fulltext/query.js';
import { textIndexOf } from '../fulltext/text-index.js';
import { visibleEntries } from '../access/policy.js';
import {
  checkPaging,
  onlyVisibleByDefault,
  pageOf,
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
 * Matches of more than this many rows need more than the default work_mem (4 MB) for the relevance
 * window (≈ 50 bytes a row); the transaction allows this much so that 1,000,000 matches stay in memory.
 */
const rankingWorkMem = '64MB';

/** The statements of a words search (which run depends on the order and, for creation order, on the count). */
export interface VisibleWordsQuery {
  limit: number;
  offset: number;
  /**
   * for a query of one word (`word`), its matches counted in entry_visible_word_count (`n`, the sum of
   * `summed` rows); null for any other query. And the visible entries of the repository (`visible`,
   * from entry_visible_count).
   */
  wordCount: Statement;
  /** the matches (`n`), each visited */
  count: Statement;
  /** the caller may not read the whole repository: the word counts (of everyone's entries) do not count its matches */
  filtered: boolean;
  /** relevance: the page's ids (`entry_id`), ranked, with the number of matches (`total`) */
  ranked: Statement;
  /** relevance: the page's ids (`entry_id`) alone, ranked, for when `count` runs beside it */
  rankedPage: Statement;
  /** creation order, many matches: the page's entries, walking the creation index and checking each row's words in place */
  walk: Statement;
  /** creation order, few matches: the page's entries from the matches (GIN index) sorted */
  sorted: Statement;
}

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
  const wordCount = {
    sql: numbered(
      `select q.word, counted.n, counted.summed,
              (select coalesce(sum(c.n), 0) from entry_visible_count c where c.repository_id = ?${typed('c')}) as visible
         from (select tsquery_single_word(${query.sql}) as word) q
         left join lateral (
           select coalesce(sum(c.n), 0) as n, count(*) as summed from entry_visible_word_count c where c.repository_id = ? and c.word = q.word${typed('c')}
         ) counted on q.word is not null`,
    ),
    params: [scope.repository.id, ...types, ...query.params, scope.repository.id, ...types],
  };
  const creationOrder = `created_at ${dir}, entry_id ${dir} limit ? offset ?`;
  const walk = `select w.entry_id from entry_visible_words w where ${where} order by w.created_at ${dir}, w.entry_id ${dir} limit ? offset ?`;
  // materialized: the matches are collected by the GIN index, not found by walking the creation index
  const sorted = `with matches as materialized (select w.entry_id, w.created_at from entry_visible_words w where ${where}) select entry_id from matches order by ${creationOrder}`;
  // Relevance ranks every match, so the one pass over the matches also counts them: a window over
  // narrow rows (the id, the time and the rank; `offset 0` keeps the rank computed below the window,
  // which otherwise holds every match's words: 87 MB on disk for 400,000 matches). Ties: creation.
  const ranked = `select entry_id, total from (
      select entry_id, created_at, rank, count(*) over () as total from (
        select w.entry_id, w.created_at, ts_rank(w.words, (${query.sql})) as rank from entry_visible_words w where ${where} offset 0) ranked) matches
    order by rank desc, ${creationOrder}`;
  // ranked top-N sort, no window: 186 ms for 400,000 matches where `ranked` takes 340 (docs/benchmarks.md)
  const rankedPage = `select w.entry_id from entry_visible_words w where ${where} order by ts_rank(w.words, (${query.sql})) desc, ${creationOrder}`;
  const paged = [...whereParams, limit, offset];
  return {
    limit,
    offset,
    wordCount,
    count,
    filtered: !allowed.wholeRepository,
    ranked: { sql: numbered(ranked), params: [...query.params, ...paged] },
    rankedPage: { sql: numbered(rankedPage), params: [...whereParams, ...query.params, limit, offset] },
    walk: { sql: numbered(pageOf(scope, `array(${walk})`)), params: paged },
    sorted: { sql: numbered(pageOf(scope, `array(${sorted})`)), params: paged },
  };
}

/**
 * The creation-order page for `matches` of `visible` entries: walking the creation index visits about
 * (offset + limit) × visible / matches rows, sorting the matches visits `matches` rows; the cheaper
 * one. (The planner alone walked the index for a word in 20 of 1,000,000 contents: 455 ms.)
 */
export function creationPage(query: VisibleWordsQuery, matches: number, visible: number): Statement {
  return matches * matches > (query.offset + query.limit) * visible ? query.walk : query.sorted;
}

/**
 * Rows of a word's counts past which a search folds them (Migration20261123170000EntryVisibleWordCounts):
 * writes fold now and then, a bulk load of many entries in one transaction leaves one row per entry.
 */
const wordCountRowsToFold = 1_000;
/** The words this process is folding the counts of (repository and word), one fold of each at a time. */
const foldingWords = new Set<string>();

/** Folds the rows of a word's counts into one, after the search that found them many (it does not wait). */
function foldWordCounts(scope: EntryScope, word: string): void {
  const key = JSON.stringify([scope.repository.id, word]);
  if (foldingWords.has(key)) return;
  foldingWords.add(key);
  scope.em
    .fork()
    .getConnection()
    .execute('select entry_visible_word_count_fold(?, array[?]::text[])', [scope.repository.id, word], 'run')
    .catch((error: unknown) => scope.logger.warn({ err: error, word }, 'folding the counts of a word failed'))
    .finally(() => foldingWords.delete(key));
}

/** The page and count of a full-text-only search from entry_visible_words (see `visibleWordsAnswer`). */
export async function searchVisibleWords(scope: EntryScope, searchText: string, options: SearchOptions, order: WordsOrder): Promise<EntriesPage> {
  const query = buildVisibleWordsQuery(scope, searchText, options);
  const countOf = async (run: RunStatement, statement: Statement) => Number((await run<{ n: string }>(statement))[0]?.n ?? 0);
  return runSearchStatements(scope, async (run, beside) => {
    // one row, whatever the query
    const [counts] = await run<{ word: string | null; n: string | null; summed: string | null; visible: string }>(query.wordCount);
    const wordMatches = counts!.n === null || query.filtered ? undefined : Number(counts!.n);
    if (counts!.word !== null && Number(counts!.summed) > wordCountRowsToFold) foldWordCounts(scope, counts!.word);
    if (order === 'created') {
      // counted first: the count is needed for any full page, and it tells which way the page is cheaper
      const matches = wordMatches ?? (await countOf(run, query.count));
      const rows = matches > query.offset ? await run<Record<string, unknown>>(creationPage(query, matches, Number(counts!.visible))) : [];
      return { rows, count: matches };
    }
    const pageOfIds = async (ranked: { entry_id: string }[]) =>
      ranked.length === 0 ? [] : await run<Record<string, unknown>>({ sql: numbered(pageOf(scope, '?::text[]')), params: [ranked.map((r) => r.entry_id)] });
    if (wordMatches !== undefined) return { rows: await pageOfIds(await run<{ entry_id: string }>(query.rankedPage)), count: wordMatches };
    // The count beside the ranked page, on a second connection in the same snapshot: each visits every
    // match, and together on two cores they take about as long as ranking alone.
    const countedBeside = beside<{ n: string }>(query.count);
    if (countedBeside) {
      const rows = await pageOfIds(await run<{ entry_id: string }>(query.rankedPage));
      return { rows, count: Number((await countedBeside)[0]?.n ?? 0) };
    }
    // no connection free for it: one statement ranks and counts
    await run({ sql: `set local work_mem = '${rankingWorkMem}'`, params: [] });
    const ranked = await run<{ entry_id: string; total: string }>(query.ranked);
    const rows = await pageOfIds(ranked);
    const total = ranked.length > 0 ? Number(ranked[0]!.total) : query.offset === 0 ? 0 : await countOf(run, query.count);
    return { rows, count: total };
  });
}
