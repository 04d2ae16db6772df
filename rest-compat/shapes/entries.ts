import { restDate } from './dates.js';

/** The spec's `_type`s (DESIGN §0: exactly as the spec writes them). */
export const types = {
  content: 'svc.model.content.Content',
  folder: 'svc.model.content.Folder',
  resource: 'com.svc.model.resource.Resource',
  entries: 'svc.model.content.service.v1.request.crud.EntriesResponse',
} as const;

type Node = Record<string, unknown> & { __typename?: string };

const dateFields = new Set(['createdAt', 'lastModifiedAt', 'lockedAt']);
/** The parts of a node shaped apart (nested), after its own fields. */
const nestedParts = new Set(['__typename', 'parent', 'predecessor', 'resource', 'children']);

function resourceShape(resource: Node): Record<string, unknown> {
  const source = resource.resourceSource as { type: string; id: string; partition: string; path: string };
  const shaped: Record<string, unknown> = { _type: types.resource };
  for (const key in resource) {
    const value = key === 'created' ? restDate(resource.created as string) : key === 'resourceSource' ? { _type: source.type, id: source.id, partition: source.partition, path: source.path } : resource[key];
    if (value !== null && value !== undefined) shaped[key] = value;
  }
  return shaped;
}

/**
 * A Folder or Content of the GraphQL API in the spec's REST shape: `_type`, its fields without nulls
 * (dates in the REST form), then its nested parts. One pass, one object per level: a page shapes 100
 * entries with two or three levels each (docs/benchmarks.md, "the page shaped in one pass").
 * `typename`: the GraphQL type when the node does not say it (a nested parent or predecessor).
 */
export function entryShape(node: Node, typename?: string): Record<string, unknown> {
  const isFolder = ('__typename' in node ? node.__typename : typename) === 'Folder' || node.entryType === 'FOLDER';
  const shaped: Record<string, unknown> = { _type: isFolder ? types.folder : types.content };
  for (const key in node) {
    if (nestedParts.has(key)) continue;
    const value = dateFields.has(key) ? restDate(node[key] as string | Date | null) : node[key];
    if (value !== null && value !== undefined) shaped[key] = value;
  }
  const { parent, predecessor, resource, children } = node;
  if (parent) shaped.parent = entryShape(parent as Node, 'Folder');
  if (predecessor) shaped.predecessor = entryShape(predecessor as Node, 'Content');
  if (resource) shaped.resource = resourceShape(resource as Node);
  // the virtual Folder.children: the folder's entries (the first page, folders first)
  if (children) shaped.children = (children as { entries: Node[] }).entries.map((child) => entryShape(child));
  return shaped;
}

export interface Projection {
  includeProperties?: string[];
  excludeProperties?: string[];
  autoExclude?: boolean;
}

/** Virtual properties left out unless asked for by name (spec: `autoExclude`). */
const virtualProperties = new Set(['children']);
const alwaysKept = new Set(['_type', 'id']);

/**
 * includeProperties / excludeProperties / autoExclude over the top-level properties of an entry, read
 * once per response (a page applies it to every entry).
 */
function projector(projection: Projection): (entry: Record<string, unknown>) => Record<string, unknown> {
  const include = projection.includeProperties?.map((p) => p.replace(/^(Folder|Content)\./, ''));
  const exclude = new Set(projection.excludeProperties?.map((p) => p.replace(/^(Folder|Content)\./, '')) ?? []);
  const autoExclude = projection.autoExclude ?? true;
  const kept = (key: string) => {
    if (alwaysKept.has(key)) return true;
    if (include && include.length > 0) return include.includes(key);
    if (exclude.has(key)) return false;
    return !(autoExclude && virtualProperties.has(key));
  };
  return (entry) => {
    // most pages keep every property: then the entry is its own projection (no copy of 100 entries)
    let dropsSome = false;
    for (const key in entry) if (!kept(key)) dropsSome = true;
    if (!dropsSome) return entry;
    const projected: Record<string, unknown> = {};
    for (const key in entry) if (kept(key)) projected[key] = entry[key];
    return projected;
  };
}

export function entriesResponse(page: { count: number; duration: number; entries: Node[] }, projection: Projection = {}) {
  const project = projector(projection);
  return {
    _type: types.entries,
    count: page.count,
    duration: page.duration,
    entries: page.entries.map((entry) => project(entryShape(entry))),
  };
}
