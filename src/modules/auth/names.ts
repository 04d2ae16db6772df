import { everyone } from './principal.js';
import { z } from 'zod';
import { illegalArguments } from '../../errors.js';

const userNamePattern = /^[A-Za-z0-9._@-]{1,64}$/;

/**
 * User names are ASCII letters, digits and . _ @ - (no look-alike letters), compared without case:
 * `Alice` and `alice` are one user, who logs in with either spelling. Input is NFC-normalised and
 * trimmed first, as every name of the service is.
 */
export const normalizeUserName = (name: string) => name.normalize('NFC').trim();
export const isUserName = (name: string) => userNamePattern.test(name);

export const userName = z
  .string()
  .transform(normalizeUserName)
  .pipe(z.string().regex(userNamePattern, '1 to 64 letters, digits or . _ @ -'));

/** A group name follows the user name rule, and is not `EVERYONE` in any case. */
export const groupName = userName.refine((name) => name.toUpperCase() !== everyone, `must not be '${everyone}' (the principal of every signed-in user)`);

/** Validates an operation's input once; a failure is a 400 naming the field (`userName: 1 to 64 …`). */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.join('.') || 'input';
  const missing = issue.code === 'invalid_type' && issue.input === undefined;
  throw illegalArguments(`${field}: ${missing ? 'is required' : issue.message}`);
}
