import { z } from 'zod';
import { bool, parse, single } from '../src/http/query.js';
import { maxLimit } from '../src/modules/search/index.js';
import type { Context } from 'koa';
import type { RestInputs } from './inputs.js';
import type { Projection } from './shapes/entries.js';

/*
 * Query parameters that are not fields of a GraphQL input type (those are parsed by RestInputs, from
 * the type itself): scalar arguments and REST's own projection, read once, strictly (src/http/query.ts).
 */
export { bool, parse };

export const nonEmptyText = single(z.string().min(1, 'must not be empty'));
/** Paging (limit, offset): digits only, at most 9 of them, said as the searches say it (the operation checks the range). */
export const limit = single(z.string().regex(/^\d{1,9}$/, `must be an integer from 0 to ${maxLimit}`)).transform(Number);
export const offset = single(z.string().regex(/^\d{1,9}$/, 'must be a non-negative integer')).transform(Number);
export const list = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));

/** Property names, repeated or comma-separated (`a&…=b` or `a,b`: no property name holds a comma). */
const propertyNames = list.transform((values) => values.flatMap((value) => value.split(',')).map((name) => name.trim()).filter((name) => name !== ''));

/** includeProperties / excludeProperties / autoExclude: which properties of each entry a search answers. */
export const projectionParameters = z.object({ includeProperties: propertyNames.optional(), excludeProperties: propertyNames.optional(), autoExclude: bool.optional() });

/** Whether the virtual `Folder.children` is wanted: named in includeProperties, or autoExclude=false. */
export function withChildren(p: Projection): boolean {
  return (p.includeProperties ?? []).some((name) => name === 'children' || name === 'Folder.children') || p.autoExclude === false;
}

/** The repository and id in the path of a call on one entry. */
export const byId = (_ctx: Context, params: Record<string, string>) => ({ repository: params.repository!, id: params.id! });

/** The parameters the spec's searches share: the GraphQL `SearchOptions` and REST's projection. */
export function searchPage(ctx: Context, inputs: RestInputs) {
  return { options: inputs.fromText('SearchOptions', ctx.query), projection: parse(projectionParameters, ctx.query) };
}
