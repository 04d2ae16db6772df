import { illegalArguments } from '../../errors.js';

/**
 * Entry names are path segments for clients that mirror folders to disks: no separators, no `.`/`..`,
 * no control characters, at most 255 characters.
 */
export function validateEntryName(name: string, field = 'name'): string {
  if (name.length === 0 || name.trim().length === 0) throw illegalArguments(`${field} must not be empty`);
  if (name.length > 255) throw illegalArguments(`${field} is longer than 255 characters`);
  if (name === '.' || name === '..') throw illegalArguments(`${field} must not be '.' or '..'`);
  if (/[/\\]/.test(name)) throw illegalArguments(`${field} must not contain '/' or '\\'`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw illegalArguments(`${field} must not contain control characters`);
  return name;
}
