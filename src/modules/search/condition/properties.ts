import { readableJoinCondition } from '../../access/policy.js';
import { illegalArguments } from '../../../errors.js';
import { asStoredName, asStoredTag } from '../../entries/names.js';
import { propertyNameSyntax } from './parser.js';

/**
 * The properties a condition or `orderBy` may name, and the SQL each one means. Identifiers in the SQL
 * come only from these tables and from aliases derived from them; values are always parameters.
 */

export type PropertyKind = 'text' | 'number' | 'date' | 'boolean' | 'version' | 'tags' | 'json';

interface Column {
  column: string;
  kind: PropertyKind;
  /** how its values are stored (names, tags: normalised): a condition's values are compared in that form too */
  asStored?: (text: string) => string;
}

/** Fields of a folder or content (the entry table). */
const entryColumns = new Map<string, Column>(Object.entries({
  id: { column: 'id', kind: 'text' },
  chronicalId: { column: 'chronical_id', kind: 'text' },
  active: { column: 'active', kind: 'boolean' },
  entryType: { column: 'entry_type', kind: 'text' },
  name: { column: 'name', kind: 'text', asStored: asStoredName },
  owner: { column: 'owner', kind: 'text' },
  createdAt: { column: 'created_at', kind: 'date' },
  createdBy: { column: 'created_by', kind: 'text' },
  lastModifiedAt: { column: 'last_modified_at', kind: 'date' },
  lastModifiedBy: { column: 'last_modified_by', kind: 'text' },
  lockedAt: { column: 'locked_at', kind: 'date' },
  lockedBy: { column: 'locked_by', kind: 'text' },
  version: { column: 'version', kind: 'version' },
  versionStatus: { column: 'version_status', kind: 'text' },
  typeName: { column: 'type_name', kind: 'text' },
  parentId: { column: 'parent_id', kind: 'text' },
  comment: { column: 'comment', kind: 'text' },
  tags: { column: 'tags', kind: 'tags', asStored: asStoredTag },
} satisfies Record<string, Column>));

/** Fields of a Resource (the file data description). */
const resourceColumns = new Map<string, Column>(Object.entries({
  id: { column: 'id', kind: 'text' },
  name: { column: 'name', kind: 'text' },
  mimeType: { column: 'mime_type', kind: 'text' },
  fileSize: { column: 'file_size', kind: 'number' },
  md5: { column: 'md5', kind: 'text' },
  created: { column: 'created_at', kind: 'date' },
  creator: { column: 'creator', kind: 'text' },
} satisfies Record<string, Column>));

/**
 * Resource fields the entry row carries a copy of (kept equal by triggers,
 * Migration20261122270000EntryResourceFields), read there so that an entry index can order and filter
 * by them; also shortcuts on an entry (spec endpoint 1 filters by `mimeType`).
 */
const copiedResourceColumns = new Map<string, Column>(Object.entries({
  mimeType: { column: 'resource_mime_type', kind: 'text' },
  fileSize: { column: 'resource_file_size', kind: 'number' },
} satisfies Record<string, Column>));

/** The links a dot path may follow: the foreign key on the entry and a one-letter code for aliases. */
const relations = {
  parent: { table: 'entry', key: 'parent_id', code: 'p' },
  predecessor: { table: 'entry', key: 'predecessor_id', code: 'v' },
  resource: { table: 'resource', key: 'resource_id', code: 'r' },
} as const;
type Relation = keyof typeof relations;

/** A name in a property path, as the condition language writes it. */
const propertyName = new RegExp(`^${propertyNameSyntax}$`);

export const maxPathDepth = 5;
/** Different dot-path prefixes one search may join (each is a join). */
export const maxJoins = 16;

/** What a property names: a column of an aliased table, or a key of its custom `properties`. */
export interface ResolvedProperty {
  /** the property as written, for messages */
  name: string;
  kind: PropertyKind;
  /** `<alias>.<column>` from the whitelists above */
  sql: string;
  /** for `properties.<key>`: the key (a parameter, never part of the SQL) */
  jsonKey?: string;
  /** for `version`: the numeric columns it compares and orders by */
  versionColumns?: [string, string];
  /** how its values are stored (see Column) */
  asStored?: (text: string) => string;
}

const hint = `known: ${[...entryColumns.keys(), 'mimeType', 'fileSize', 'properties.<name>'].join(', ')}; dot paths through parent., predecessor., resource. (${[...resourceColumns.keys()].join(', ')})`;

/**
 * Resolves property paths for one query and collects the joins they need. The root entry is `e` and
 * its resource `r`; other hops get an alias named after their path (`j_vp` = predecessor.parent), so
 * equal prefixes share one join.
 */
export class PropertyResolver {
  private readonly joinSql: Map<string, string>;

  /** `joins`: those a search holds already (its condition's), counted with the new ones against `maxJoins`. */
  constructor(joins: Iterable<[string, string]> = []) {
    this.joinSql = new Map(joins);
  }

  get joins(): ReadonlyMap<string, string> {
    return this.joinSql;
  }

  /** `position` (1-based, in the condition) makes messages point at the property. */
  resolve(path: string, position?: number): ResolvedProperty {
    const where = position === undefined ? '' : ` at position ${position}`;
    const unknown = () => illegalArguments(`unknown property '${path}'${where} (${hint})`);
    const segments = path.split('.');
    let alias = 'e';
    let table: 'entry' | 'resource' = 'entry';
    let code = '';
    let hops = 0;
    for (let i = 0; i < segments.length; i++) {
      const name = segments[i]!;
      const last = i === segments.length - 1;
      if (table === 'entry' && name === 'properties' && i === segments.length - 2) {
        const key = segments[i + 1]!;
        // the condition's lexer gives only such names; orderBy's text could hold any (`x y`, empty)
        if (!propertyName.test(key)) throw unknown();
        return { name: path, kind: 'json', sql: `${alias}.properties`, jsonKey: key };
      }
      if (last) {
        if (table === 'entry' && copiedResourceColumns.has(name)) return this.resolveCopied(alias, name, path);
        if (!(table === 'entry' ? entryColumns : resourceColumns).has(name)) throw unknown();
        return this.resolveIn({ alias }, table, name, path);
      }
      if (table !== 'entry' || !Object.hasOwn(relations, name)) throw unknown();
      if (++hops > maxPathDepth) throw illegalArguments(`property '${path}'${where} goes deeper than ${maxPathDepth} links`);
      if (name === 'resource' && i === segments.length - 2 && copiedResourceColumns.has(segments[i + 1]!)) return this.resolveCopied(alias, segments[i + 1]!, path);
      const next = this.hop(alias, code, name as Relation);
      alias = next.alias;
      code = next.code;
      table = relations[name as Relation].table;
    }
    throw unknown();
  }

  private resolveIn(at: { alias: string }, table: 'entry' | 'resource', name: string, path: string): ResolvedProperty {
    const column = (table === 'entry' ? entryColumns : resourceColumns).get(name)!;
    const resolved: ResolvedProperty = { name: path, kind: column.kind, sql: `${at.alias}.${column.column}`, asStored: column.asStored };
    if (column.kind === 'version') resolved.versionColumns = [`${at.alias}.version_major`, `${at.alias}.version_minor`];
    return resolved;
  }

  /** A resource field read from the copy on the entry `alias` (no join). */
  private resolveCopied(alias: string, name: string, path: string): ResolvedProperty {
    const column = copiedResourceColumns.get(name)!;
    return { name: path, kind: column.kind, sql: `${alias}.${column.column}` };
  }

  /** Follows one link from `alias`, adding its left join (many-to-one: rows never multiply). */
  private hop(alias: string, code: string, relation: Relation): { alias: string; code: string } {
    const { table, key, code: letter } = relations[relation];
    const nextCode = code + letter;
    // the root entry's resource is `r`, joined only when named: an unused join (even one the planner
    // removes) keeps an index-only scan from driving the page (docs/benchmarks.md)
    const nextAlias = nextCode === 'r' ? 'r' : `j_${nextCode}`;
    if (!this.joinSql.has(nextAlias)) {
      if (this.joinSql.size >= maxJoins) throw illegalArguments(`a search may follow at most ${maxJoins} different dot paths`);
      // an entry the caller may not read is not there (DESIGN §10)
      const readable = table === 'entry' ? ` and ${readableJoinCondition(nextAlias)}` : '';
      this.joinSql.set(nextAlias, `left join ${table} ${nextAlias} on ${nextAlias}.id = ${alias}.${key}${readable}`);
    }
    return { alias: nextAlias, code: nextCode };
  }
}
