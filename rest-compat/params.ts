import { z } from 'zod';
import { illegalArguments } from '../src/errors.js';

/** Query parameters arrive as strings (or lists when repeated); these parse them once, strictly. */
const single = <T extends z.ZodType<unknown, string>>(schema: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .refine((v) => !Array.isArray(v), 'must be given once')
    .pipe(z.string())
    .pipe(schema);

export const text = single(z.string());
export const nonEmptyText = single(z.string().min(1, 'must not be empty'));
export const bool = single(z.enum(['true', 'false'], { message: "must be 'true' or 'false'" })).transform((v) => v === 'true');
export const integer = single(z.string().regex(/^-?\d{1,15}$/, 'must be an integer')).transform(Number);
export const list = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));
export const entryType = single(z.enum(['CONTENT', 'FOLDER'], { message: "must be 'CONTENT' or 'FOLDER'" }));
export const versionStatus = single(z.enum(['WORKING_COPY', 'CURRENT'], { message: "must be 'WORKING_COPY' or 'CURRENT'" }));
export const direction = single(z.string()).transform((v) => v.toLowerCase()).pipe(z.enum(['asc', 'desc'], { message: "must be 'asc' or 'desc'" }));

/** The parameters the three searches share (spec "Search parameters shared by the three searches"). */
export const searchParameters = {
  entryType: entryType.optional(),
  includeVersions: bool.optional(),
  orderBy: text.optional(),
  orderingDirection: direction.optional(),
  limit: integer.optional(),
  offset: integer.optional(),
  includeProperties: list.optional(),
  excludeProperties: list.optional(),
  autoExclude: bool.optional(),
};

export type SearchParameters = z.infer<z.ZodObject<typeof searchParameters>>;

export function searchOptions(p: SearchParameters) {
  return {
    entryType: p.entryType,
    includeVersions: p.includeVersions,
    orderBy: p.orderBy,
    orderingDirection: p.orderingDirection,
    limit: p.limit,
    offset: p.offset,
  };
}

/** Whether the virtual `Folder.children` is wanted: named in includeProperties, or autoExclude=false. */
export function withChildren(p: SearchParameters): boolean {
  return (p.includeProperties ?? []).some((name) => name === 'children' || name === 'Folder.children') || p.autoExclude === false;
}

export function projection(p: SearchParameters) {
  return { includeProperties: p.includeProperties, excludeProperties: p.excludeProperties, autoExclude: p.autoExclude };
}

/** Validates input against a schema; a failure is a 400 naming each parameter and what is wrong. */
export function parse<T extends z.ZodType>(schema: T, input: unknown, where = 'parameter'): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || where;
    const message = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
    return `${name} ${message}`;
  });
  throw illegalArguments(`invalid ${where}: ${problems.join('; ')}`);
}
