import type { EntityManager } from '@mikro-orm/postgresql';
import { executePrepared } from '../../db/prepared.js';
import { plainSelect, type PlainRecord } from '../../db/plain-rows.js';
import { mayRead, type EntryFacts } from '../access/policy.js';
import type { EntryRecord } from '../search/entry-query.js';
import { Entry, Resource, type EntryType } from './entry.entity.js';
import { requireReadable } from './queries.js';
import type { EntryScope } from './scope.js';

/**
 * An entry read for an answer, as plain data (read-only: no entity of the unit of work), with what an
 * answer about it nests: its parent folder (null when at the root or when the caller may not read it),
 * its resource, and its predecessor with the same parts. The GraphQL field resolvers take these
 * instead of loading them (entries.resolver.ts), and REST shapes them as they are (entryView).
 */
export interface EntryRead extends EntryRecord {
  preloaded: {
    parent: EntryRecord | null;
    resource: PlainRecord<Resource> | null;
    /** undefined: not read with it (a predecessor's own predecessor: GraphQL loads it when asked) */
    predecessor?: EntryRead | null;
  };
}

/** What an answer nests, each a left join of the read's statement onto `e`, the entry. */
const joins = {
  parent: 'entry p on p.id = e.parent_id',
  resource: 'resource r on r.id = e.resource_id',
  predecessor: 'entry v on v.id = e.predecessor_id',
  predecessorParent: 'entry vp on vp.id = v.parent_id',
  predecessorResource: 'resource vr on vr.id = v.resource_id',
} as const;
type Part = keyof typeof joins;

/**
 * The read's statement over `parts`, and the readers of its columns (made once per kind, from the
 * entities' metadata). A part the statement does not read is null in its rows (`take`).
 */
function readStatement(em: EntityManager, name: string, parts: readonly Part[], where = 'e.id = ? and e.repository_id = ?') {
  const selects = {
    entry: plainSelect(em, Entry, 'e'),
    parent: plainSelect(em, Entry, 'p', 'parent.'),
    resource: plainSelect(em, Resource, 'r', 'resource.'),
    predecessor: plainSelect(em, Entry, 'v', 'predecessor.'),
    predecessorParent: plainSelect(em, Entry, 'vp', 'predecessor.parent.'),
    predecessorResource: plainSelect(em, Resource, 'vr', 'predecessor.resource.'),
  };
  const sql = `select ${[selects.entry, ...parts.map((part) => selects[part])].map((select) => select.sql).join(', ')}
      from entry e ${parts.map((part) => `left join ${joins[part]}`).join(' ')}
     where ${where}`;
  return { name, sql, selects };
}

/** A folder has neither resource nor predecessor: its read joins its parent only (a third of the columns to send and parse). */
const statementOf = (em: EntityManager, expected: EntryType | undefined) =>
  expected === 'FOLDER' ? readStatement(em, 'folder-read', ['parent']) : readStatement(em, 'entry-read', Object.keys(joins) as Part[]);
const statements = new Map<EntryType | undefined, ReturnType<typeof readStatement>>();

/** A parent folder as the caller may see it: not there when it may not read it (DESIGN §10). */
export const readableParent = async <P extends EntryFacts>(scope: EntryScope, parent: P | null | undefined): Promise<P | null> =>
  parent && (await mayRead(scope, parent)) ? parent : null;

let predecessorsStatement: ReturnType<typeof readStatement> | undefined;
let contentResourceStatement: ReturnType<typeof readStatement> | undefined;

/**
 * A content of the scope's repository that the caller may read, with its resource (null when it has
 * none), as plain data in one prepared statement — or the 404 of `requireEntry`: the input of a
 * conversion, read by its submission and again by its job (two ORM loads each before, a good part of
 * the service's CPU a job: docs/benchmarks.md, "conversion — fewer statements a job").
 */
export async function readContentWithResource(scope: EntryScope, id: string): Promise<{ content: EntryRecord; resource: PlainRecord<Resource> | null }> {
  const orm = scope.services.orm.em as EntityManager;
  const { name, sql, selects } = (contentResourceStatement ??= readStatement(orm, 'content-resource-read', ['resource']));
  // none found: an empty row, whose entry is none (a 404)
  const [row = {}] = await executePrepared<Record<string, unknown>>(orm, name, sql, [id, scope.repository.id]);
  return { content: await requireReadable(scope, id, selects.entry.take(row), 'CONTENT'), resource: selects.resource.take(row) };
}

/**
 * The predecessors `ids` of a search page's contents (entriesPageView), each with what `readEntry`
 * nests under a predecessor: its parent folder when the caller may read it, and its resource. Of the
 * same chronicles, so under the same ACLs as the versions found. One statement for the page, plain
 * rows: loading them as entities took a batch of predecessors, then one of their parents and
 * resources, and a hydration per entry.
 */
export async function readPredecessors(scope: EntryScope, ids: readonly string[]): Promise<Map<string, EntryRead>> {
  const read = new Map<string, EntryRead>();
  if (ids.length === 0) return read;
  const orm = scope.services.orm.em as EntityManager;
  const { name, sql, selects } = (predecessorsStatement ??= readStatement(orm, 'predecessors-read', ['parent', 'resource'], 'e.id = any(?::text[]) and e.repository_id = ?'));
  for (const row of await executePrepared<Record<string, unknown>>(orm, name, sql, [ids, scope.repository.id])) {
    const predecessor = selects.entry.take(row)!;
    read.set(predecessor.id, Object.assign(predecessor, { preloaded: { parent: await readableParent(scope, selects.parent.take(row)), resource: selects.resource.take(row) } }));
  }
  return read;
}

/**
 * The read verb of one entry (GET of a folder or content, GraphQL `entry`, `folder`, `content`): the
 * entry `id` of the scope's repository that the caller may read, of the kind `expected` if given, or
 * the 404 that names what was asked (the same for one it may not read). One prepared statement reads
 * the entry with its parent, resource and predecessor (with the predecessor's parent and resource; a
 * folder with its parent); no entity is hydrated: forking a unit of work and hydrating entities were
 * most of a read's time (docs/benchmarks.md, "gateway-overhead — the read verb").
 */
export async function readEntry(scope: EntryScope, id: string, expected?: EntryType): Promise<EntryRead> {
  // a read, in no transaction: on the ORM's pool, without the request's unit of work (made when first
  // used, context.ts: a read answered here and from the caches makes none)
  const orm = scope.services.orm.em as EntityManager;
  let statement = statements.get(expected);
  if (!statement) statements.set(expected, (statement = statementOf(orm, expected)));
  const { name, sql, selects } = statement;
  // none found: an empty row, whose entry is none (a 404)
  const [row = {}] = await executePrepared<Record<string, unknown>>(orm, name, sql, [id, scope.repository.id]);
  const entry = await requireReadable(scope, id, selects.entry.take(row), expected);
  const predecessor = selects.predecessor.take(row);
  return Object.assign(entry, {
    preloaded: {
      parent: await readableParent(scope, selects.parent.take(row)),
      resource: selects.resource.take(row),
      // of the same chronicle, so under the same ACL as the version read
      predecessor:
        predecessor &&
        Object.assign(predecessor, {
          preloaded: {
            parent: await readableParent(scope, selects.predecessorParent.take(row)),
            resource: selects.predecessorResource.take(row),
          },
        }),
    },
  });
}
