import type { EntityManager } from '@mikro-orm/postgresql';
import { Meilisearch } from 'meilisearch';
import type { Config } from '../../config.js';
import { numbered } from '../../db/placeholders.js';
import { illegalArguments } from '../../errors.js';
import type { RunStatement, SqlPredicate } from '../search/entry-query.js';
import { saveResourceTexts, type ResourceText } from './operations.js';
import { nameDocument, resolveTextMatch, textQuery } from './query.js';

/**
 * Where extracted text is searched: the Postgres index (default) or Meilisearch (MEILISEARCH_URL).
 * Either way the text is also kept in `resource_text` (the record that a resource is done, and what a
 * rebuild of the Meilisearch index reads); the names' words are always matched in Postgres.
 */
export interface TextIndex {
  readonly name: 'postgres' | 'meilisearch';
  /** Stores texts, each whole (a rerun overwrites them). Answers the resource ids stored (not those gone meanwhile). */
  save(em: EntityManager, repositoryId: string, texts: ResourceText[]): Promise<string[]>;
  /**
   * The predicate over `e` matching the entries whose name and text match `searchText` (`run`: the
   * search's own statements, for a query first, under its timeout); `defaultVisibility`: the search
   * sees no versions, working copies or deactivated entries.
   */
  match(run: RunStatement, repositoryId: string, searchText: string, defaultVisibility: boolean): Promise<SqlPredicate>;
}

export const postgresTextIndex: TextIndex = {
  name: 'postgres',
  save: (em, _repositoryId, texts) => saveResourceTexts(em, texts),
  match: (run, repositoryId, searchText, defaultVisibility) =>
    resolveTextMatch(async (sql, params) => (await run<{ entry_id: string }>({ sql: numbered(sql), params })).map((row) => row.entry_id), repositoryId, searchText, defaultVisibility),
};

/** Resource ids one Meilisearch answer contributes to a search at most (then intersected in SQL). */
export const meilisearchMaxHits = 1_000;
const indexName = 'resource_text';

/**
 * Meilisearch: one document per resource `{id, repositoryId, text}`. A search asks Meilisearch for at
 * most `meilisearchMaxHits` resource ids of the repository, and the SQL intersects them with the
 * other terms: `(name words match or e.resource_id = any(ids))`. The name and the text each match the
 * whole query apart (the text's words are Meilisearch's), where the Postgres index matches their words
 * together (docs/search.md).
 */
export class MeilisearchTextIndex implements TextIndex {
  readonly name = 'meilisearch';
  private readonly client: Meilisearch;
  private ready?: Promise<unknown>;

  constructor(host: string, apiKey?: string) {
    this.client = new Meilisearch({ host, apiKey });
  }

  private index() {
    this.ready ??= this.client.index(indexName).updateFilterableAttributes(['repositoryId']).waitTask();
    return this.ready.then(() => this.client.index(indexName));
  }

  async save(em: EntityManager, repositoryId: string, texts: ResourceText[]): Promise<string[]> {
    const saved = new Set(await saveResourceTexts(em, texts));
    const documents = texts.filter((t) => saved.has(t.resourceId)).map((t) => ({ id: t.resourceId, repositoryId, text: t.text }));
    // waited for: the job ends when the texts are searchable, and a rerun after a crash sends them again
    if (documents.length > 0) await (await this.index()).addDocuments(documents, { primaryKey: 'id' }).waitTask();
    return [...saved];
  }

  async match(_run: RunStatement, repositoryId: string, searchText: string): Promise<SqlPredicate> {
    const name = textQuery(searchText);
    const answer = await (await this.index()).search(searchText, {
      filter: `repositoryId = ${JSON.stringify(repositoryId)}`,
      limit: meilisearchMaxHits,
      // every word must occur, as in the Postgres index (Meilisearch's default drops words to find more)
      matchingStrategy: 'all',
      attributesToRetrieve: ['id'],
    });
    const ids = answer.hits.map((hit) => String(hit.id));
    return { sql: `(${nameDocument} @@ (${name.sql}) or e.resource_id = any(?::text[]))`, params: [...name.params, ids] };
  }
}

const indexes = new WeakMap<Config, TextIndex>();

/** The text index of a configuration (one Meilisearch client per service). */
export function textIndexOf(config: Config): TextIndex {
  let index = indexes.get(config);
  if (!index) {
    index = config.MEILISEARCH_URL ? new MeilisearchTextIndex(config.MEILISEARCH_URL, config.MEILISEARCH_API_KEY) : postgresTextIndex;
    indexes.set(config, index);
  }
  return index;
}

/** fullText() terms one condition may hold when each is a request to Meilisearch (or resolved first in Postgres). */
export const maxRemoteFullTextTerms = 8;
/**
 * fullText() terms of one condition the Postgres index resolves first (a query each, a few ms); beyond,
 * they are compiled in place, which scans the entries (about 1 s at 1,000,000 contents, where nine
 * resolved terms of a 2 % word take 135 ms: docs/benchmarks.md).
 */
export const maxResolvedPostgresTerms = 32;

/**
 * The predicates of a condition's fullText() terms, resolved before compiling: always for a remote
 * index (Meilisearch answers asynchronously, `maxRemoteFullTextTerms` at most); for the Postgres index
 * up to `maxResolvedPostgresTerms` of them, else undefined and they are compiled in place.
 */
export async function resolveFullTextTerms(
  index: TextIndex,
  run: RunStatement,
  repositoryId: string,
  texts: string[],
  defaultVisibility: boolean,
): Promise<Map<string, SqlPredicate> | undefined> {
  const distinct = [...new Set(texts)];
  if (distinct.length === 0) return undefined;
  if (index.name === 'postgres' && distinct.length > maxResolvedPostgresTerms) return undefined;
  if (index.name !== 'postgres' && distinct.length > maxRemoteFullTextTerms) {
    throw illegalArguments(`condition: at most ${maxRemoteFullTextTerms} different fullText() terms with the Meilisearch index, found ${distinct.length}`);
  }
  const resolved: [string, SqlPredicate][] = [];
  // one after another: they share the search's transaction
  for (const text of distinct) resolved.push([text, await index.match(run, repositoryId, text, defaultVisibility)]);
  return new Map(resolved);
}
