import { z } from 'zod';
import { illegalArguments } from '../errors.js';

/*
 * Query parameters arrive as text, or as a list when repeated: these read them once, strictly, for
 * every HTTP path (the REST layer's, rest-compat/params.ts, and the byte transfer's).
 */

/** One text value read by `schema`; a parameter given twice is refused. */
export const single = <T extends z.ZodType<unknown, string>>(schema: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .refine((v) => !Array.isArray(v), 'must be given once')
    .pipe(z.string())
    .pipe(schema);

/**
 * A flag's text: `true` or `false`, in either case (as enum values are read, TRUE or true). The one
 * reading of a boolean given as text: query parameters, and input-type fields from text (rest-compat/inputs.ts).
 */
export const flagText = z
  .string()
  .toLowerCase()
  .pipe(z.enum(['true', 'false'], { message: "must be 'true' or 'false'" }))
  .transform((v) => v === 'true');

/** A flag parameter (`recursive=true`, `inline=false`). */
export const bool = single(flagText);

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
