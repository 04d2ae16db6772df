import { asStoredName, asStoredTag } from '../entries/names.js';
import { requireEntry } from '../entries/queries.js';
import type { VersionStatus } from '../entries/entry.entity.js';
import type { EntryScope } from '../entries/scope.js';
import { runEntryQuery, type EntriesPage, type SearchOptions, type SqlPredicate } from './entry-query.js';

/** Spec endpoint 1's property filters: an entry matches when it matches every given one. */
export interface PropertyFilter {
  /** the content's chronicalId (the id its versions share) */
  chronicalId?: string;
  createdBy?: string;
  /** true: locked by anybody; false: not locked */
  isLocked?: boolean;
  lastModifiedBy?: string;
  lockedBy?: string;
  /** the resource's media type, exactly */
  mimeType?: string;
  /** NFC-normalised and trimmed before it is compared */
  name?: string;
  owner?: string;
  parentId?: string;
  /** having every one of these tags (NFC-normalised) */
  tags?: string[];
  /** a version label, e.g. 1.0 */
  version?: string;
  /** working copies are found only with WORKING_COPY */
  versionStatus?: VersionStatus;
}

const equalityColumns: Partial<Record<keyof PropertyFilter, string>> = {
  chronicalId: 'e.chronical_id',
  createdBy: 'e.created_by',
  lastModifiedBy: 'e.last_modified_by',
  lockedBy: 'e.locked_by',
  mimeType: 'e.resource_mime_type',
  name: 'e.name',
  owner: 'e.owner',
  parentId: 'e.parent_id',
  version: 'e.version',
};

/** Names and tags are stored normalised (`asStoredName`): a value given otherwise must still find them. */
const asStored: Partial<Record<keyof PropertyFilter, (value: string) => string>> = { name: asStoredName };

export function propertyPredicates(filter: PropertyFilter): SqlPredicate[] {
  const predicates: SqlPredicate[] = [];
  for (const [key, column] of Object.entries(equalityColumns)) {
    const value = filter[key as keyof PropertyFilter];
    const stored = asStored[key as keyof PropertyFilter];
    if (value !== undefined) predicates.push({ sql: `${column} = ?`, params: [stored && typeof value === 'string' ? stored(value) : value] });
  }
  if (filter.isLocked !== undefined) predicates.push({ sql: filter.isLocked ? 'e.locked_by is not null' : 'e.locked_by is null', params: [] });
  if (filter.tags && filter.tags.length > 0) {
    const tags = filter.tags.map(asStoredTag);
    const tagFormula = { sql: tags.map(() => 'bool_or(v.tag = ?)').join(' and '), params: tags, tags, anyOf: tags.length === 1 };
    // In one folder the tags are checked on its children's rows, not through the tags' GIN index: the
    // planner AND'ed the tag's whole posting list (20,000 entries of 1,000,000) with the folder's 1,000,
    // a cost growing with the repository; a folder's children are found from entry_visible_parent_idx
    // (`is true` keeps the test out of an index condition; null tags fail it as they fail `@>`).
    const sql = filter.parentId === undefined ? 'e.tags @> ?::text[]' : '(e.tags @> ?::text[]) is true';
    predicates.push({ sql, params: [tags], tagFormula });
  }
  return predicates;
}

export async function searchByProperties(scope: EntryScope, filter: PropertyFilter, options: SearchOptions): Promise<EntriesPage> {
  return runEntryQuery(scope, propertyPredicates(filter), { ...options, versionStatus: filter.versionStatus ?? options.versionStatus });
}

/** Root-level entries, folders first (DESIGN §4 `GET C/home`). */
export async function home(scope: EntryScope, options: SearchOptions): Promise<EntriesPage> {
  return runEntryQuery(scope, [{ sql: 'e.parent_id is null', params: [] }], options, `e.entry_type = 'CONTENT', e.name {dir}, e.id`);
}

/** The entries of one folder, folders first (a folder the caller may not read is a 404). */
export async function children(scope: EntryScope, folderId: string, options: SearchOptions): Promise<EntriesPage> {
  await requireEntry(scope, folderId, 'FOLDER');
  return runEntryQuery(scope, [{ sql: 'e.parent_id = ?', params: [folderId] }], options, `e.entry_type = 'CONTENT', e.name {dir}, e.id`);
}
