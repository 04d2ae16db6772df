import { z } from 'zod';
import { illegalArguments } from '../src/errors.js';
import { maxLimit } from '../src/modules/search/index.js';
import type { Context } from 'koa';
import type { RestInputs } from './inputs.js';
import type { Projection } from './shapes/entries.js';

/*
 * Query parameters that are not fields of a GraphQL input type (those are parsed by RestInputs, from
 * the type itself): scalar arguments and REST's own projection. They arrive as strings (or lists when
 * repeated); these parse them once, strictly.
 */
const single = <T extends z.ZodType<unknown, string>>(schema: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .refine((v) => !Array.isArray(v), 'must be given once')
    .pipe(z.string())
    .pipe(schema);

export const nonEmptyText = single(z.string().min(1, 'must not be empty'));
/** `true` or `false`, in either case (as the input types' booleans and enum values are read). */
export const bool = single(z.string().toLowerCase().pipe(z.enum(['true', 'false'], { message: "must be 'true' or 'false'" }))).transform((v) => v === 'true');
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

/** Validates input against a schema; a failure is a 400 naming each parameter and what is wrong. */
export function parse<T extends z.ZodType>(schema: T, input: unknown, where = 'parameter'): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || where;
    const missing = (issue.code === 'invalid_type' || issue.code === 'invalid_union') && issue.input === undefined;
    const message = missing ? 'is required' : issue.message;
    return `${name} ${message}`;
  });
  throw illegalArguments(`invalid ${where}: ${problems.join('; ')}`);
}
