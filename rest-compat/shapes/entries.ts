import { restDate } from './dates.js';

/** The spec's `_type`s (DESIGN §0: exactly as the spec writes them). */
export const types = {
  content: 'svc.model.content.Content',
  folder: 'svc.model.content.Folder',
  resource: 'com.svc.model.resource.Resource',
  entries: 'svc.model.content.service.v1.request.crud.EntriesResponse',
} as const;

type Node = Record<string, unknown> & { __typename?: string };

const dateFields = ['createdAt', 'lastModifiedAt', 'lockedAt'];

function withoutNulls(record: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key in record) if (record[key] !== null && record[key] !== undefined) kept[key] = record[key];
  return kept;
}

function resourceShape(resource: Node): Record<string, unknown> {
  const source = resource.resourceSource as { type: string; id: string; partition: string; path: string };
  return withoutNulls({
    _type: types.resource,
    ...resource,
    created: restDate(resource.created as string),
    resourceSource: { _type: source.type, id: source.id, partition: source.partition, path: source.path },
  });
}

/** A Folder or Content of the GraphQL API in the spec's REST shape: `_type`, dates, nested parts. */
export function entryShape(node: Node): Record<string, unknown> {
  const { __typename, parent, predecessor, resource, children, ...fields } = node;
  const isFolder = __typename === 'Folder' || fields.entryType === 'FOLDER';
  const shaped: Record<string, unknown> = { _type: isFolder ? types.folder : types.content, ...fields };
  for (const field of dateFields) if (field in shaped) shaped[field] = restDate(shaped[field] as string);
  if (parent) shaped.parent = entryShape({ __typename: 'Folder', ...(parent as Node) });
  if (predecessor) shaped.predecessor = entryShape({ __typename: 'Content', ...(predecessor as Node) });
  if (resource) shaped.resource = resourceShape(resource as Node);
  // the virtual Folder.children: the folder's entries (the first page, folders first)
  if (children) shaped.children = (children as { entries: Node[] }).entries.map(entryShape);
  return withoutNulls(shaped);
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
