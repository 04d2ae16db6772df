import { numbered } from '../../db/placeholders.js';
import { preparedName } from '../../db/prepared.js';
import { readOnlyTransaction } from '../../db/read-only-transaction.js';
import { plainSelect, type PlainRecord } from '../../db/plain-rows.js';
import { illegalArguments, ServiceError } from '../../errors.js';
import { readableAcls, readerStatement, readerTable, visibleEntries } from '../access/policy.js';
import type { ReadableAcls } from '../access/acl.js';
import { Entry, Resource, type EntryType, type VersionStatus } from '../entries/entry.entity.js';
import type { EntryScope } from '../entries/scope.js';
import { PropertyResolver } from './condition/properties.js';

/**
 * A parameterised SQL predicate over `e` (entry), with `?` for each parameter. Never string-built from
 * input. `joins` (alias → left join) are the further tables it names (`r`: the entry's resource).
 */
export interface SqlPredicate {
  sql: string;
  params: unknown[];
  joins?: ReadonlyMap<string, string>;
  /** the same predicate over one entry's rows in entry_visible_tag, when it only asks for tags (below) */
  tagFormula?: TagFormula;
}

/** A statement with its parameters bound. */
export interface Statement {
  sql: string;
  params: unknown[];
  /** run as a prepared statement (named after its text, preparedName): parsed and planned once per connection; a text the code fixes */
  prepared?: true;
}

/**
 * A predicate that only asks which tags an entry has, with no negation (`'a' in tags or tags in ('b',
 * 'c')`, the property search's `tags`): `sql` is a condition over the aggregates of one entry's rows
 * `v` of entry_visible_tag (`bool_or(v.tag = ?)`), `tags` every tag it names; `anyOf` when it holds
 * exactly for the entries that have one of `tags` (tags joined by `or` only). A predicate carries one
 * only when its own `sql` names no column but `e.tags` (countFromTagSets evaluates it over a tag set).
 */
export interface TagFormula {
  sql: string;
  params: unknown[];
  tags: string[];
  anyOf: boolean;
}

/**
 * The search parameters the spec's three searches share (GraphQL's `SearchOptions` input fills them),
 * and what the operations add to them.
 */
export interface SearchOptions {
  /** only contents or only folders */
  entryType?: EntryType;
  /** every version of each content, not only the latest */
  includeVersions?: boolean;
  /** a property a condition can name (except tags); missing values last */
  orderBy?: string;
  orderingDirection?: 'asc' | 'desc';
  /** default 100, at most `maxLimit` */
  limit?: number;
  offset?: number;
  /** deactivated entries too (a content's version history; a condition naming `active`): their metadata is anyone's, as GET's is, their bytes are not */
  includeInactive?: boolean;
  versionStatus?: VersionStatus;
  /** working copies beside the versions (a condition naming `versionStatus` decides between them) */
  includeWorkingCopies?: boolean;
}

/** An entry as plain data under the Entry's property names: what a search hands out (a page is read-only). */
export type EntryRecord = PlainRecord<Entry>;

/**
 * An entry of a page, with the parent folder and the resource its nested fields show, read by the
 * page's own statement: a page of 100 entries needs no query per nested field (docs/benchmarks.md).
 */
export interface PageEntry extends EntryRecord {
  preloaded: { parent: EntryRecord | null; resource: PlainRecord<Resource> | null };
}

export interface EntriesPage {
  count: number;
  duration: number;
  entries: PageEntry[];
}

export const defaultLimit = 100;
export const maxLimit = 1000;

/** The order without `orderBy`: SQL where `{dir}` is the direction (appended to its last term too), with its parameters if any (full-text relevance). */
export type DefaultOrder = string | Statement;

/**
 * `orderBy`: any property a condition may name except collections (tags), dot paths included; `version`
 * orders numerically. Ties are broken by id so that paging is stable.
 */
export function orderClause(
  resolver: PropertyResolver,
  orderBy: string | undefined,
  direction: 'asc' | 'desc' = 'asc',
  fallback: DefaultOrder = 'e.created_at {dir}, e.id',
): Statement {
  const dir = direction === 'desc' ? 'desc' : 'asc';
  if (orderBy === undefined) {
    const { sql, params } = typeof fallback === 'string' ? { sql: fallback, params: [] } : fallback;
    return { sql: `${sql.replaceAll('{dir}', dir)} ${dir}`, params };
  }
  let property;
  try {
    property = resolver.resolve(orderBy);
  } catch (error) {
    throw illegalArguments(`orderBy: ${(error as Error).message}`);
  }
  if (property.kind === 'tags') throw illegalArguments(`orderBy: '${orderBy}' is a collection and cannot order`);
  const tail = `${dir} nulls last, e.id ${dir}`;
  if (property.versionColumns) return { sql: `${property.versionColumns[0]} ${dir} nulls last, ${property.versionColumns[1]} ${tail}`, params: [] };
  // a JSON null is a missing value (last); set values order by kind (text, numbers, booleans, arrays, objects), then value
  if (property.jsonKey !== undefined) return { sql: `nullif(${property.sql} -> ?::text, 'null'::jsonb) ${tail}`, params: [property.jsonKey] };
  return { sql: `${property.sql} ${tail}`, params: [] };
}

export function checkPaging(limit: number | undefined, offset: number | undefined): { limit: number; offset: number } {
  const l = limit ?? defaultLimit;
  const o = offset ?? 0;
  if (!Number.isInteger(l) || l < 0 || l > maxLimit) throw illegalArguments(`limit must be an integer from 0 to ${maxLimit}`);
  if (!Number.isInteger(o) || o < 0) throw illegalArguments('offset must be a non-negative integer');
  return { limit: l, offset: o };
}

/**
 * Whether the trigger-kept tables (entry_visible_count, entry_visible_tag) can count this search: they
 * hold the default visibility (latest, active, not a working copy) of a whole repository only.
 */
export function countableFromTriggerTables(scope: SearchScope, options: SearchOptions): boolean {
  // versionStatus=CURRENT narrows what the tables count (folders have none)
  return onlyVisibleByDefault(options) && options.versionStatus === undefined && visibleEntries(scope.principal, scope.repository, scope.readable).wholeRepository;
}

/**
 * The count of a search without predicates of its own, from the totals triggers keep per ACL
 * (Migration20261122270001EntryVisibleCounts, Migration20261127020000Acls): the whole repository's,
 * or for a caller who may not read all of it the totals of the ACLs it may read plus what it owns
 * under others (an index range of entry_visible_owner_idx).
 */
function countFromTotals(scope: SearchScope, predicates: SqlPredicate[], options: SearchOptions): Statement | undefined {
  if (predicates.length > 0 || !onlyVisibleByDefault(options) || options.versionStatus !== undefined) return undefined;
  const types = options.entryType ? [options.entryType] : ['CONTENT', 'FOLDER'];
  const totals = 'select coalesce(sum(n), 0) from entry_visible_count where repository_id = $1 and entry_type = any($2::text[])';
  if (visibleEntries(scope.principal, scope.repository, scope.readable).wholeRepository) return { sql: `select (${totals}) as n`, params: [scope.repository.id, types] };
  // The totals take the readable ids as a subquery's value, not as constants: weighing 1,000 ids one by one
  // against the statistics took 1.4 ms of planning, and the estimate chose a scan of all the totals over
  // their index (docs/benchmarks.md, "search — the user's statements planned"). The entries the caller
  // owns keep the constants: only a constant list is hashed for the test of each row.
  return {
    sql: `select (${totals} and acl_id = any((select $3::bigint[])::bigint[]))
              + (select count(*) from entry e where e.repository_id = $1 and e.owner = $4 and e.entry_type = any($2::text[]) and not (e.acl_id = any($3::bigint[]))
                   and e.is_latest and e.active and e.version_status is distinct from 'WORKING_COPY') as n`,
    params: [scope.repository.id, types, scope.readable!.ids, scope.principal.userName],
  };
}

/** Tags up to which an `or` of tags is counted as a union of their index ranges (a statement per tag beyond would plan slowly). */
const maxUnitedTags = 64;

/**
 * The count of a search whose predicates only ask for tags, from entry_visible_tag
 * (Migration20261123040001EntryVisibleTags): an index-only scan of the named tags' rows grouped by
 * entry, instead of a visit to every match in the entry table.
 */
function countFromTags(scope: SearchScope, predicates: SqlPredicate[], options: SearchOptions): Statement | undefined {
  const formulas = predicates.map((p) => p.tagFormula);
  if (predicates.length === 0 || !formulas.every((f): f is TagFormula => f !== undefined)) return undefined;
  if (!countableFromTriggerTables(scope, options)) return undefined;
  const tags = [...new Set(formulas.flatMap((f) => f.tags))];
  const typeFilter = options.entryType ? ' and v.entry_type = ?' : '';
  const types = options.entryType ? [options.entryType] : [];
  if (formulas.length === 1 && formulas[0]!.anyOf && tags.length <= maxUnitedTags) {
    // one index range per tag, each in entry order: merged without a hash or a sort (40,000 of 1,000,000: 14 → 8 ms)
    const branch = `select v.entry_id from entry_visible_tag v where v.repository_id = ? and v.tag = ?${typeFilter}`;
    return {
      sql: numbered(`select count(*) as n from (${tags.map(() => branch).join(' union ')}) matches`),
      params: tags.flatMap((tag) => [scope.repository.id, tag, ...types]),
    };
  }
  return {
    sql: numbered(
      `select count(*) as n from (select v.entry_id from entry_visible_tag v where v.repository_id = ? and v.tag = any(?::text[])${typeFilter}` +
        ` group by v.entry_id having ${formulas.map((f) => `(${f.sql})`).join(' and ')}) matches`,
    ),
    params: [scope.repository.id, tags, ...types, ...formulas.flatMap((f) => f.params)],
  };
}

/**
 * The count of a search whose predicates only ask for tags, for a caller who may not read the whole
 * repository: the tag sets of its readable ACLs (entry_visible_tag_set,
 * Migration20261207170000EntryVisibleTagSets), each counted when the predicates hold for its tags —
 * the predicates themselves, over the row as `e`, since a tag formula's SQL names no column but
 * `e.tags` — plus the matches it owns under other ACLs (an index range of entry_visible_owner_idx).
 * Its readable matches are not visited: the cost follows the tag sets, not the repository.
 */
function countFromTagSets(scope: SearchScope, predicates: SqlPredicate[], options: SearchOptions): Statement | undefined {
  if (predicates.length === 0 || !predicates.every((p) => p.tagFormula !== undefined)) return undefined;
  if (!onlyVisibleByDefault(options) || options.versionStatus !== undefined) return undefined;
  if (visibleEntries(scope.principal, scope.repository, scope.readable).wholeRepository) return undefined;
  const holds = predicates.map((p) => `(${p.sql})`).join(' and ');
  const params = predicates.flatMap((p) => p.params);
  const typeFilter = options.entryType ? ' and e.entry_type = ?' : '';
  const types = options.entryType ? [options.entryType] : [];
  const ids = scope.readable!.ids;
  // The readable ids as constants (not as countFromTotals' subquery value): weighed against the statistics, they
  // let the planner choose between the named tags' sets (GIN), the readable ACLs' (btree) or both, and a row's
  // test hashes them. Without them it intersected both indexes, 8–15 ms against 0.1–0.4 (docs/benchmarks.md).
  return {
    sql: numbered(`select (select coalesce(sum(e.n), 0) from entry_visible_tag_set e where e.repository_id = ? and e.acl_id = any(?::bigint[])${typeFilter} and ${holds})
              + (select count(*) from entry e where e.repository_id = ? and e.owner = ? and not (e.acl_id = any(?::bigint[]))
                   and e.is_latest and e.active and e.version_status is distinct from 'WORKING_COPY'${typeFilter} and ${holds}) as n`),
    params: [scope.repository.id, ids, ...types, ...params, scope.repository.id, scope.principal.userName, ids, ...types, ...params],
  };
}

/** Whether a search sees only entries visible by default (latest, active, not working copies): those the trigger-kept tables hold. */
export function onlyVisibleByDefault(options: SearchOptions): boolean {
  return !options.includeInactive && !options.includeVersions && !options.includeWorkingCopies && options.versionStatus !== 'WORKING_COPY';
}

/** Which versions a search sees (DESIGN §5): latest ones, every one, or the working copies. */
function visibility(scope: SearchScope, options: SearchOptions): SqlPredicate {
  const allowed = visibleEntries(scope.principal, scope.repository, scope.readable);
  const parts = [allowed.sql];
  const params: unknown[] = [...allowed.params];
  if (!options.includeInactive) parts.push('e.active');
  if (!options.includeVersions) parts.push('e.is_latest');
  if (options.versionStatus === 'WORKING_COPY') parts.push(`e.version_status = 'WORKING_COPY'`);
  else if (options.versionStatus === 'CURRENT') parts.push(`e.version_status = 'CURRENT'`);
  else if (!options.includeWorkingCopies) parts.push(`e.version_status is distinct from 'WORKING_COPY'`);
  if (options.entryType) {
    parts.push('e.entry_type = ?');
    params.push(options.entryType);
  }
  return { sql: parts.join(' and '), params };
}

/** A search's two statements, numbered (`$1`…) with their parameters: the page and the total count. */
export interface EntryQuery {
  limit: number;
  offset: number;
  /** the page's ids (`id`), in order: `runPage` reads their entries */
  page: Statement;
  count: Statement;
}

/**
 * Who searches where: what the visibility rules read (and the metadata the select list comes from);
 * `readable`: the caller's readable ACLs (`withReadableAcls`; none for an administrator).
 */
export type SearchScope = Pick<EntryScope, 'principal' | 'repository' | 'em'> & { readable?: ReadableAcls };

/**
 * The scope with the caller's readable ACLs, read once per request (DESIGN §10: a search filters by
 * them in its SQL). The scope stays the prototype, so its lazy parts (the logger) stay lazy.
 */
export async function withReadableAcls<S extends EntryScope>(scope: S & { readable?: ReadableAcls }): Promise<S & { readable?: ReadableAcls }> {
  if (scope.readable) return scope;
  const readable = await readableAcls(scope);
  return readable ? Object.assign(Object.create(scope) as S, { readable }) : scope;
}

const pageSelects = (scope: Pick<SearchScope, 'em'>) => ({
  entry: plainSelect(scope.em, Entry, 'e'),
  parent: plainSelect(scope.em, Entry, 'p', 'parent.'),
  resource: plainSelect(scope.em, Resource, 'r', 'resource.'),
});

/**
 * The statement reading a page's entries from their ids in order, each with its parent folder and
 * resource (PageEntry); `ordinality` keeps the order. The ids come first, from a statement of their own
 * (for an ordered index with an offset an index-only scan: the skipped rows are never read). Its text is
 * the same for every page, so it is prepared: each connection plans it once, where planning it with every
 * page cost ≈ 1 ms of Postgres' CPU (docs/benchmarks.md, "srch8").
 */
export function pageOf(scope: Pick<SearchScope, 'em'>, ids: string[]): Statement {
  const { entry, parent, resource } = pageSelects(scope);
  return {
    sql: `select ${entry.sql}, ${parent.sql}, ${resource.sql} from unnest($1::text[]) with ordinality as page(id, n) join entry e on e.id = page.id
    left join entry p on p.id = e.parent_id left join resource r on r.id = e.resource_id order by page.n`,
    params: [ids],
    prepared: true,
  };
}

/** A page's rows: its ids (`ids`, a statement of their column `id` in order), then their entries (pageOf). */
export async function runPage(scope: Pick<SearchScope, 'em'>, run: RunStatement, ids: Statement): Promise<Record<string, unknown>[]> {
  const found = (await run<{ id: string }>(ids)).map((row) => row.id);
  return found.length === 0 ? [] : run(pageOf(scope, found));
}

/** A row of `pageOf` as the page's entry. */
function pageEntry(scope: Pick<SearchScope, 'em'>): (row: Record<string, unknown>) => PageEntry {
  const { entry, parent, resource } = pageSelects(scope);
  return (row) => Object.assign(entry.take(row)!, { preloaded: { parent: parent.take(row), resource: resource.take(row) } });
}

/** Builds a search: visibility rules, the caller's predicates, ordering and paging. */
export function buildEntryQuery(scope: SearchScope, predicates: SqlPredicate[], options: SearchOptions, defaultOrder?: DefaultOrder): EntryQuery {
  const { limit, offset } = checkPaging(options.limit, options.offset);
  const all = [visibility(scope, options), ...predicates];
  const where = all.map((p) => `(${p.sql})`).join(' and ');
  const params = all.flatMap((p) => p.params);
  const predicateJoins = all.flatMap((p) => [...(p.joins ?? [])]);
  // orderBy's dot path shares the condition's joins, and counts with them
  const resolver = new PropertyResolver(predicateJoins);
  const order = orderClause(resolver, options.orderBy, options.orderingDirection, defaultOrder);
  const fromWith = (joins: Iterable<string>) => ['from entry e', ...joins].join(' ');
  // joined entries are filtered by what the caller may read: the statement starts with who that is
  const withReader = (sql: string, statementParams: unknown[]): Statement => {
    if (!sql.includes(readerTable)) return { sql: numbered(sql), params: statementParams };
    const reader = readerStatement(scope.principal, scope.readable);
    return { sql: numbered(reader.sql + sql), params: [...reader.params, ...statementParams] };
  };
  const ids = `select e.id ${fromWith(resolver.joins.values())} where ${where} order by ${order.sql} limit ? offset ?`;
  return {
    limit,
    offset,
    page: withReader(ids, [...params, ...order.params, limit, offset]),
    count:
      countFromTotals(scope, predicates, options) ??
      countFromTags(scope, predicates, options) ??
      countFromTagSets(scope, predicates, options) ??
      withReader(`select count(*) as n ${fromWith(new Map(predicateJoins).values())} where ${where}`, params),
  };
}

/** Runs one statement of a search, with its parameters bound. */
export type RunStatement = <Row>(statement: Statement) => Promise<Row[]>;

/**
 * Starts a statement at once on another connection, in the search's snapshot (`SnapshotReaders`), to
 * run beside the search's own; undefined when no such connection is free (then run it with `run`).
 */
export type RunBeside = <Row>(statement: Statement) => Promise<Row[]> | undefined;

/**
 * Runs a search's statements in one read-only transaction (one snapshot for all of them, shared with
 * the statements run beside it), so that SEARCH_TIMEOUT_MS holds for this search only (past it: 503
 * `unavailable`), and shapes its answer. The SQL runs with bound parameters, never with values written
 * into it, on a connection of the ORM's pool held for the transaction (rather than through Kysely's
 * transaction, which cannot name a statement: `Statement.prepared`).
 */
/**
 * Postgres keeps no NUL in a text and refuses one in a parameter: a search value holding one (a
 * condition's literal, a property filter) could match nothing stored, and is a 400 rather than the
 * database's error. (Full-text queries read it as a space, as stored texts do: `textQuery`.)
 */
function refuseNul(params: readonly unknown[]): void {
  // a list (`in (…)`) travels as one array parameter
  const holdsNul = (param: unknown): boolean =>
    typeof param === 'string' ? param.includes('\u0000') : Array.isArray(param) && param.some(holdsNul);
  if (params.some(holdsNul)) {
    throw illegalArguments('a search value must not contain a NUL character (U+0000)');
  }
}

export async function runSearchStatements(
  scope: EntryScope,
  statements: (run: RunStatement, beside: RunBeside) => Promise<{ rows: Record<string, unknown>[]; count: number }>,
): Promise<EntriesPage> {
  const started = performance.now();
  const timeoutMs = scope.services.config.SEARCH_TIMEOUT_MS;
  const readers = scope.services.snapshotReaders;
  try {
    const { rows, count } = await readOnlyTransaction(scope.em, async (client) => {
      const run: RunStatement = async <Row>({ sql, params, prepared }: Statement) => {
        refuseNul(params);
        const result = await client.query(prepared ? { name: preparedName(sql), text: sql, values: params } : { text: sql, values: params });
        return result.rows as Row[];
      };
      await run({ sql: `set local statement_timeout = ${Math.floor(timeoutMs)}`, params: [] });
      let snapshot: Promise<string> | undefined;
      const besides: Promise<unknown>[] = [];
      const beside: RunBeside = <Row>(statement: Statement) => {
        if (!readers.free) return undefined;
        // exported before any later statement of this transaction is sent (they queue on its connection)
        if (!snapshot) {
          snapshot = run<{ id: string }>({ sql: 'select pg_export_snapshot() as id', params: [] }).then(([row]) => row!.id);
          // observed here too: a reader that failed before it awaited the id (no connection) leaves it to nobody
          snapshot.catch(() => undefined);
        }
        refuseNul(statement.params);
        const result = readers.run<Row>(snapshot, timeoutMs, statement);
        besides.push(result.catch(() => undefined));
        return result;
      };
      try {
        return await statements(run, beside);
      } finally {
        // the transaction (and with it the exported snapshot) outlives every statement beside it
        await Promise.all(besides);
      }
    });
    return { count, duration: Math.round(performance.now() - started), entries: rows.map(pageEntry(scope)) };
  } catch (error) {
    if ((error as { code?: string }).code === '57014') {
      throw new ServiceError('unavailable', `the search took longer than ${timeoutMs} ms (SEARCH_TIMEOUT_MS) and was stopped: narrow it, or try again`);
    }
    throw error;
  }
}

/**
 * The total of a search from its page when the page tells it (a short page that is not past the end),
 * else undefined: then it is counted apart, so that a large result is not materialised and sorted
 * whole just to count it (a window count would do that).
 */
function countFromPage(rows: number, limit: number, offset: number): number | undefined {
  return rows < limit && (rows > 0 || offset === 0) ? offset + rows : undefined;
}

/** Predicates that need queries of their own first (full-text terms): run as the search's statements, under its timeout. */
export type ResolvePredicates = (run: RunStatement) => Promise<SqlPredicate[]>;

/** Runs a search; `count` is the total. */
export async function runEntryQuery(
  unfiltered: EntryScope,
  predicates: SqlPredicate[] | ResolvePredicates,
  options: SearchOptions,
  defaultOrder?: DefaultOrder,
): Promise<EntriesPage> {
  const scope = await withReadableAcls(unfiltered);
  return runSearchStatements(scope, async (run) => {
    const query = buildEntryQuery(scope, typeof predicates === 'function' ? await predicates(run) : predicates, options, defaultOrder);
    const rows = await runPage(scope, run, query.page);
    const fromPage = countFromPage(rows.length, query.limit, query.offset);
    if (fromPage !== undefined) return { rows, count: fromPage };
    const [total] = await run<{ n: string }>(query.count);
    return { rows, count: Number(total?.n ?? 0) };
  });
}
