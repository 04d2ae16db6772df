import { illegalArguments } from '../../errors.js';

interface Sql {
  sql: string;
  params: unknown[];
}

/** Word prefixes (`abc*`) one search may hold: each is a query operand of its own. */
export const maxPrefixes = 16;
/** The longest search text (by-text's searchText, the text of fullText('…')). */
export const maxSearchTextLength = 1_000;

/** The words of an entry's name (split at . _ - / and spaces); the GIN index entry_name_words_idx covers exactly this expression. */
export const nameDocument = `to_tsvector('simple'::regconfig, translate(e.name, '._-/', '    '))`;

/** A word ending in `*` outside quotes, optionally excluded (`-abc*`). */
const prefixPattern = /(^|\s)(-?)([^\s"*()-][^\s"*()]*)\*(?=\s|$)/g;

/**
 * The tsquery of a search text, as SQL with bound parameters (never the text in the SQL): web-search
 * syntax (all words, "a phrase", -excluded, or) through `websearch_to_tsquery`, plus word prefixes
 * `abc*` (outside quotes), each `to_tsquery(quote_literal(word) || ':*')` so its text is one operand
 * whatever characters it holds. Language-neutral: the 'simple' configuration (no stemming, no stop words).
 */
export function textQuery(searchText: string): Sql {
  if (searchText.length > maxSearchTextLength) throw illegalArguments(`search text is longer than ${maxSearchTextLength} characters`);
  const prefixes: { word: string; excluded: boolean }[] = [];
  // quoted phrases keep their stars: only the parts outside quotes are looked at
  const rest = searchText
    .split(/("[^"]*"?)/)
    .map((part) =>
      part.startsWith('"')
        ? part
        : part.replace(prefixPattern, (_match, space: string, minus: string, word: string) => {
            prefixes.push({ word, excluded: minus === '-' });
            return space;
          }),
    )
    .join('');
  if (prefixes.length > maxPrefixes) throw illegalArguments(`search text: at most ${maxPrefixes} word prefixes (word*), found ${prefixes.length}`);
  const operands: Sql[] = [];
  if (rest.trim() !== '' || prefixes.length === 0) operands.push({ sql: `websearch_to_tsquery('simple'::regconfig, ?::text)`, params: [rest] });
  for (const { word, excluded } of prefixes) {
    operands.push({ sql: `${excluded ? '!!' : ''}to_tsquery('simple'::regconfig, quote_literal(?::text) || ':*')`, params: [word] });
  }
  return { sql: operands.map((o) => `(${o.sql})`).join(' && '), params: operands.flatMap((o) => o.params) };
}

/**
 * `fullText('…')` against the Postgres index: the entry matches when its name's words or its resource's
 * extracted text (resource_text, GIN on its tsvector) match the whole query. Each side uses its own
 * index: the matching resources are collected once (an InitPlan over resource_text_document_idx) into
 * an array that entry_resource_idx looks up, so the planner can OR the two bitmaps. (A correlated
 * `exists` per entry cannot drive an index: the plan scanned every entry, 0.5 s for 10 matches in
 * 100,000 rows; docs/benchmarks.md.)
 */
export function fullTextMatch(searchText: string): Sql {
  const query = textQuery(searchText);
  return {
    sql: `(${nameDocument} @@ (${query.sql}) or e.resource_id = any(array(select t.resource_id from resource_text t where t.document @@ (${query.sql}))))`,
    params: [...query.params, ...query.params],
  };
}

/**
 * by-text's default order: relevance first (`ts_rank` of the query over the name's words and the text),
 * then the default order. Ranked only for the page's candidates, after the indexes found them.
 */
export function relevanceOrder(searchText: string): Sql {
  const query = textQuery(searchText);
  return {
    sql: `ts_rank(${nameDocument} || coalesce((select t.document from resource_text t where t.resource_id = e.resource_id), ''::tsvector), (${query.sql})) desc, e.created_at {dir}, e.id`,
    params: query.params,
  };
}
