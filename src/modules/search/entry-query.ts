import { illegalArguments } from '../../errors.js';
import { visibleEntries } from '../access/policy.js';
import { Entry, type VersionStatus } from '../entries/entry.entity.js';
import type { SearchOptionsInput } from '../entries/entry.types.js';
import type { EntryScope } from '../entries/scope.js';

/** A parameterised SQL predicate over `e` (entry) and `r` (its resource). Never string-built from input. */
export interface SqlPredicate {
  sql: string;
  params: unknown[];
}

/** The search parameters the spec's three searches share, and what the operations add to them. */
export interface SearchOptions extends SearchOptionsInput {
  /** deactivated entries too (a content's version history); searches never set it */
  includeInactive?: boolean;
  versionStatus?: VersionStatus;
}

export interface EntriesPage {
  count: number;
  duration: number;
  entries: Entry[];
}

export const defaultLimit = 100;
export const maxLimit = 1000;

/** Properties a search may order by, and the column each one means. */
const orderColumns: Record<string, string> = {
  id: 'e.id',
  chronicalId: 'e.chronical_id',
  name: 'e.name',
  entryType: 'e.entry_type',
  active: 'e.active',
  owner: 'e.owner',
  createdAt: 'e.created_at',
  createdBy: 'e.created_by',
  lastModifiedAt: 'e.last_modified_at',
  lastModifiedBy: 'e.last_modified_by',
  lockedAt: 'e.locked_at',
  lockedBy: 'e.locked_by',
  version: 'e.version_major {dir}, e.version_minor',
  versionStatus: 'e.version_status',
  typeName: 'e.type_name',
  parentId: 'e.parent_id',
  'resource.name': 'r.name',
  'resource.mimeType': 'r.mime_type',
  'resource.fileSize': 'r.file_size',
  'resource.created': 'r.created_at',
  mimeType: 'r.mime_type',
  fileSize: 'r.file_size',
};

export function orderClause(orderBy: string | undefined, direction: 'asc' | 'desc' = 'asc', fallback = 'e.created_at {dir}, e.id'): string {
  const dir = direction === 'desc' ? 'desc' : 'asc';
  if (orderBy === undefined) return fallback.replaceAll('{dir}', dir) + ` ${dir}`;
  const column = orderColumns[orderBy];
  if (!column) throw illegalArguments(`orderBy: unknown property '${orderBy}' (known: ${Object.keys(orderColumns).join(', ')})`);
  return `${column.replaceAll('{dir}', dir)} ${dir} nulls last, e.id ${dir}`;
}

export function checkPaging(limit: number | undefined, offset: number | undefined): { limit: number; offset: number } {
  const l = limit ?? defaultLimit;
  const o = offset ?? 0;
  if (!Number.isInteger(l) || l < 0 || l > maxLimit) throw illegalArguments(`limit must be an integer from 0 to ${maxLimit}`);
  if (!Number.isInteger(o) || o < 0) throw illegalArguments('offset must be a non-negative integer');
  return { limit: l, offset: o };
}

/** Which versions a search sees (DESIGN §5): latest ones, every one, or the working copies. */
function visibility(scope: EntryScope, options: SearchOptions): SqlPredicate {
  const allowed = visibleEntries(scope.principal, scope.repository);
  const parts = [allowed.sql];
  const params: unknown[] = [...allowed.params];
  if (!options.includeInactive) parts.push('e.active');
  if (!options.includeVersions) parts.push('e.is_latest');
  if (options.versionStatus === 'WORKING_COPY') parts.push(`e.version_status = 'WORKING_COPY'`);
  else if (options.versionStatus === 'CURRENT') parts.push(`e.version_status = 'CURRENT'`);
  else parts.push(`e.version_status is distinct from 'WORKING_COPY'`);
  if (options.entryType) {
    parts.push('e.entry_type = ?');
    params.push(options.entryType);
  }
  return { sql: parts.join(' and '), params };
}

/** Runs a search: visibility rules, the caller's predicates, ordering and paging; `count` is the total. */
export async function runEntryQuery(
  scope: EntryScope,
  predicates: SqlPredicate[],
  options: SearchOptions,
  defaultOrder?: string,
): Promise<EntriesPage> {
  const started = performance.now();
  const { limit, offset } = checkPaging(options.limit, options.offset);
  const all = [visibility(scope, options), ...predicates];
  const where = all.map((p) => `(${p.sql})`).join(' and ');
  const params = all.flatMap((p) => p.params);
  const order = orderClause(options.orderBy, options.orderingDirection, defaultOrder);
  const connection = scope.em.getConnection();
  const from = 'from entry e left join resource r on r.id = e.resource_id';
  const rows = await connection.execute<Record<string, unknown>[]>(
    `select e.*, count(*) over() as total_count ${from} where ${where} order by ${order} limit ? offset ?`,
    [...params, limit, offset],
  );
  let count = rows.length > 0 ? Number(rows[0]!.total_count) : 0;
  if (rows.length === 0 && (offset > 0 || limit === 0)) {
    const [total] = await connection.execute<{ n: string }[]>(`select count(*) as n ${from} where ${where}`, params);
    count = Number(total?.n ?? 0);
  }
  const entries = rows.map(({ total_count: _, ...row }) => scope.em.map(Entry, row));
  return { count, duration: Math.round(performance.now() - started), entries };
}
