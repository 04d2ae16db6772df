import { z } from 'zod';
import { bool, parse, single } from '../src/http/query.js';
import { maxLimit } from '../src/modules/search/index.js';
import { repeated, type InputSchemas } from './inputs.js';
import type { Projection } from './shapes/entries.js';

/*
 * Query parameters that are not fields of a GraphQL input type (those come from the type itself,
 * inputs.ts): scalar arguments and REST's own projection, read once, strictly (src/http/query.ts).
 */
export { bool, parse };

export const nonEmptyText = single(z.string().min(1, 'must not be empty'));
/** Paging (limit, offset): digits only, at most 9 of them, said as the searches say it (the operation checks the range). */
export const limit = single(z.string().regex(/^\d{1,9}$/, `must be an integer from 0 to ${maxLimit}`))
  .transform(Number)
  .meta({ description: `page size, at most ${maxLimit}; default 100` });
export const offset = single(z.string().regex(/^\d{1,9}$/, 'must be a non-negative integer'))
  .transform(Number)
  .meta({ description: 'entries to skip; default 0' });
export const list = repeated(z.string());

/** Property names, repeated or comma-separated (`a&…=b` or `a,b`: no property name holds a comma). */
const propertyNames = list.transform((values) => values.flatMap((value) => value.split(',')).map((name) => name.trim()).filter((name) => name !== ''));

/** includeProperties / excludeProperties / autoExclude: which properties of each entry a search answers. */
export const projectionParameters = z.object({
  includeProperties: propertyNames.optional().meta({ description: 'only these properties of each entry (repeated or comma-separated); `children` asks for Folder.children' }),
  excludeProperties: propertyNames.optional().meta({ description: 'leave these properties out' }),
  autoExclude: bool.optional().meta({ description: 'false: the virtual properties (Folder.children) too; default true' }),
});

/** Whether the virtual `Folder.children` is wanted: named in includeProperties, or autoExclude=false. */
export function withChildren(p: Projection): boolean {
  return (p.includeProperties ?? []).some((name) => name === 'children' || name === 'Folder.children') || p.autoExclude === false;
}

/** The parameters the spec's searches share: the GraphQL `SearchOptions` and REST's projection. */
export const searchPageParameters = (inputs: InputSchemas) => inputs.text('SearchOptions').extend(projectionParameters.shape);
