import { illegalArguments } from '../../errors.js';
import { longerThan } from '../entries/names.js';

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

/**
 * A word as one quoted tsquery operand (`'ab''c'`), and with a prefix mark (`'ab''c':*`): inside the quotes tsquery
 * reads `''` as a quote and a backslash as escaping the next character. (`quote_literal` writes
 * backslashes as an E'…' string, which tsquery cannot read: `\!*` was a 500.)
 */
const quotedOperand = (word: string) => `'${word.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
const prefixOperand = (word: string) => `${quotedOperand(word)}:*`;

/** A word ending in `*` outside quotes, optionally excluded (`-abc*`). */
const prefixPattern = /(^|\s)(-?)([^\s"*()-][^\s"*()]*)\*(?=\s|$)/g;

/** The characters at which a name is split into words (`nameDocument`). */
const nameSeparators = /[._\/-]+/g;
/** A word outside quotes, optionally excluded (`-word`). */
const excludableWord = /(^|\s)(-?)([^\s"-][^\s"]*)(?=\s|$)/g;

/**
 * The search text twice: as the text index reads it, and as a name's words read it. A name is split
 * into words at `. _ - /` (`nameDocument`), so there a word holding them is the phrase of its parts
 * (`invoice-2024.pdf` → `"invoice 2024 pdf"`), and so is a quoted phrase; the text index reads
 * `invoice-2024.pdf` as one word. The two forms are OR-ed, so a word excluded (`-v1.2`) is excluded
 * in both of its forms in each.
 */
function textAndNameForms(searchText: string): { text: string; names: string } {
  const forms = { text: '', names: '' };
  for (const part of searchText.split(/("[^"]*"?)/)) {
    if (part.startsWith('"')) {
      forms.text += part;
      forms.names += part.replace(nameSeparators, ' ');
      continue;
    }
    const formOf = (asNames: boolean) =>
      part.replace(excludableWord, (word: string, space: string, minus: string, body: string) => {
        if (!/[._/-]/.test(body)) return word;
        const phrase = `"${body.replace(nameSeparators, ' ').trim()}"`;
        if (minus === '-') return `${space}-${body} -${phrase}`;
        return asNames ? `${space}${phrase}` : word;
      });
    forms.text += formOf(false);
    forms.names += formOf(true);
  }
  return forms;
}

/**
 * The tsquery of a search text, as SQL with bound parameters (never the text in the SQL): web-search
 * syntax (all words, "a phrase", -excluded, or) through `websearch_to_tsquery`, plus word prefixes
 * `abc*` (outside quotes), each `to_tsquery('<quoted word>:*')` so its text is one operand
 * whatever characters it holds; the rest as the text reads it OR-ed with it as names read it (`textAndNameForms`).
 * Language-neutral: the 'simple' configuration (no stemming, no stop words).
 */
export function textQuery(text: string): Sql {
  // as extracted texts are stored (`storableText`, NFKC): `é` typed as `e` + accent finds `é`, `ff` finds `ﬀ`;
  // control characters (NUL, which Postgres refuses in any text) and lone surrogates are no part of a word
  const searchText = text
    .toWellFormed()
    .normalize('NFKC')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, ' ');
  if (searchText.trim() === '') throw illegalArguments('search text: must not be empty');
  if (longerThan(searchText, maxSearchTextLength)) throw illegalArguments(`search text is longer than ${maxSearchTextLength} characters`);
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
    .join('')
    // an `or` with nothing on one side is not an operator (websearch_to_tsquery would ask for the word "or")
    .replace(/^\s*or\s+(?=\S)/i, '')
    .replace(/(?<=\S)\s+or\s*$/i, '');
  if (prefixes.length > maxPrefixes) throw illegalArguments(`search text: at most ${maxPrefixes} word prefixes (word*), found ${prefixes.length}`);
  const operands: Sql[] = [];
  if (rest.trim() !== '' || prefixes.length === 0) {
    const forms = textAndNameForms(rest);
    operands.push(
      forms.names === forms.text
        ? { sql: `websearch_to_tsquery('simple'::regconfig, ?::text)`, params: [forms.text] }
        : { sql: `websearch_to_tsquery('simple'::regconfig, ?::text) || websearch_to_tsquery('simple'::regconfig, ?::text)`, params: [forms.text, forms.names] },
    );
  }
  for (const { word, excluded } of prefixes) {
    // as one word, or as a name's words read it: its parts in this order, the last one a prefix (`invoice-20*`)
    const parts = word.split(nameSeparators).filter((part) => part !== '');
    const asParts = parts.map((part, i) => (i === parts.length - 1 ? prefixOperand(part) : quotedOperand(part))).join(' <-> ');
    const operand = `to_tsquery('simple'::regconfig, ?::text)`;
    operands.push(
      parts.length > 1
        ? { sql: `${excluded ? '!!' : ''}(${operand} || ${operand})`, params: [prefixOperand(word), asParts] }
        : { sql: `${excluded ? '!!' : ''}${operand}`, params: [prefixOperand(word)] },
    );
  }
  return { sql: operands.map((o) => `(${o.sql})`).join(' && '), params: operands.flatMap((o) => o.params) };
}

/** The entries entry_visible_words holds: latest, active, not a working copy. */
const visibleByDefault = `(e.is_latest and e.active and e.version_status is distinct from 'WORKING_COPY')`;

/**
 * The entries outside entry_visible_words (old versions, working copies, deactivated ones) whose
 * name's and text's words together (`entry_words`) match the query, checked only on those the name
 * index or the text index say hold one of the words it asks for (`any_positive_word`,
 * Migration20261123060000HiddenEntryWords); a query of exclusions only is checked on each of them.
 * Three alternatives, so that the planner ORs the bitmaps of entry_name_words_idx and
 * entry_resource_idx (the text's matching resources collected once into an array) with the others.
 */
function hiddenEntriesMatch(query: Sql): Sql[] {
  const anyWord = `any_positive_word(${query.sql})`;
  // each alternative names the query twice: in its candidates (`anyWord`) and in the check
  const checked = (candidates: string) => ({
    // the visibility first: where rows are filtered one by one, the visible ones cost no name words
    sql: `(not ${visibleByDefault} and ${candidates} and entry_words(e.name, e.resource_id) @@ (${query.sql}))`,
    params: [...query.params, ...query.params],
  });
  return [
    checked(`${nameDocument} @@ ${anyWord}`),
    checked(`e.resource_id = any(array(select t.resource_id from resource_text t where t.document @@ ${anyWord}))`),
    checked(`${anyWord} is null`),
  ];
}

/** Alternatives as one predicate. */
const anyOf = (alternatives: Sql[]): Sql => ({ sql: `(${alternatives.map((a) => a.sql).join(' or ')})`, params: alternatives.flatMap((a) => a.params) });

/**
 * The matching entries of entry_visible_words of one repository (`?`): its GIN index over the words of
 * name and text is that repository's (Migration20261123120000RepositoryWordIndexes), so the repository
 * is always named, as a value the planner sees.
 */
const visibleWordsMatch = (query: Sql) => `select w.entry_id from entry_visible_words w where w.repository_id = ? and w.words @@ (${query.sql})`;

/**
 * `fullText('…')` against the Postgres index, compiled in place: the entry matches when the words of
 * its name and of its extracted text, together, match the whole query (`entry_words`: `acme invoice`
 * finds acme.pdf whose text says invoice; `-draft` leaves out an entry whose name or text says draft),
 * from entry_visible_words for the entries it holds, else checked on the entry. `resolveTextMatch`
 * (below) does better where it can run a query first; this is for the terms it leaves.
 */
export function fullTextMatch(repositoryId: string, searchText: string): Sql {
  const query = textQuery(searchText);
  // not correlated with `e` (the repository is a parameter): Postgres hashes the subquery once
  return anyOf([{ sql: `e.id in (${visibleWordsMatch(query)})`, params: [repositoryId, ...query.params] }, ...hiddenEntriesMatch(query)]);
}

/** Matching entries up to which the visible ones are sent as a list of ids; beyond, a hashed subquery. */
export const maxListedTextMatches = 50_000;

/**
 * The Postgres index's match (as `fullTextMatch`) with the matching entries of entry_visible_words
 * found first: up to `maxListedTextMatches` entries it is a bound list of ids, which the planner both
 * looks up by the primary key (few matches) and hashes when it filters rows in an index's order (many)
 * — an array from a subquery is searched linearly per row, 4 s for a page of a 1 % word at 1,000,000
 * contents (docs/benchmarks.md). Beyond that it stays a subquery, which Postgres hashes once per
 * statement. With `defaultVisibility` (no versions, working copies or deactivated entries asked for)
 * the other entries are not looked at.
 */
export async function resolveTextMatch(
  run: (sql: string, params: unknown[]) => Promise<string[]>,
  repositoryId: string,
  searchText: string,
  defaultVisibility: boolean,
): Promise<Sql> {
  const query = textQuery(searchText);
  const words = visibleWordsMatch(query);
  const ids = await run(`${words} limit ${maxListedTextMatches + 1}`, [repositoryId, ...query.params]);
  const visible = ids.length <= maxListedTextMatches ? { sql: `e.id = any(?::text[])`, params: [ids] } : { sql: `e.id in (${words})`, params: [repositoryId, ...query.params] };
  return defaultVisibility ? visible : anyOf([visible, ...hiddenEntriesMatch(query)]);
}

/**
 * by-text's default order: relevance first (`ts_rank` of the query over the name's words, weighted A,
 * and the text: `entry_words`, Migration20261123050000EntryVisibleWords, as entry_visible_words ranks),
 * then the default order. Ranked only for the page's candidates, after the indexes found them.
 */
export function relevanceOrder(searchText: string): Sql {
  const query = textQuery(searchText);
  return { sql: `ts_rank(entry_words(e.name, e.resource_id), (${query.sql})) desc, e.created_at {dir}, e.id`, params: query.params };
}
