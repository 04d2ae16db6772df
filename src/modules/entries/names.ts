import { illegalArguments } from '../../errors.js';

/**
 * Characters no name or tag may hold: C0 and C1 controls, and the bidirectional overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069), which make a name display as another one (`invoice‮fdp.exe`).
 */
// eslint-disable-next-line no-control-regex
const forbiddenCharacters = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** a surrogate not in a pair (the `u` flag reads pairs as one code point) */
const loneSurrogate = /\p{Cs}/u;
/** A text that shows nothing: only characters drawn as nothing (zero-width spaces and joiners, fillers), marks and spaces. */
const invisible = /^[\p{Default_Ignorable_Code_Point}\p{M}\p{White_Space}]*$/u;

const forbiddenCharactersEverywhere = new RegExp(forbiddenCharacters.source, 'g');

/**
 * An uploaded file's name as its resource keeps it: the name the client's file had, made safe to
 * show rather than refused (a browser sends what the disk holds): valid Unicode, NFC, without the
 * characters names may not hold, trimmed, at most 255 characters with its extension kept. Before, a
 * right-to-left override (`a\u202Egpj.exe`, shown as "aexe.jpg") and 10,000 characters were kept.
 */
export function asResourceName(fileName: string): string {
  const cleaned = fileName.toWellFormed().normalize('NFC').replace(forbiddenCharactersEverywhere, '').trim();
  const characters = [...cleaned];
  if (invisible.test(cleaned)) return 'upload';
  if (characters.length <= 255) return cleaned;
  const dot = cleaned.lastIndexOf('.');
  const extension = dot > 0 && cleaned.length - dot <= 16 ? [...cleaned.slice(dot)] : [];
  return [...characters.slice(0, 255 - extension.length), ...extension].join('');
}

/** Whether `text` is Unicode: JavaScript strings may hold lone surrogates, which no database can store. */
export const isWellFormed = (text: string) => !loneSurrogate.test(text);

/**
 * Whether `text` holds more than `max` characters: code points, as the database counts them, not
 * UTF-16 units (255 emoji are 255 characters). Counted only when the units say it may be too long.
 */
export const longerThan = (text: string, max: number) => text.length > max && [...text].length > max;

/**
 * A name as stored: NFC-normalised and trimmed, so that names which look the same are the same (`é`
 * typed as one character or as `e` + accent). Searches compare what they are given in this form too.
 */
export const asStoredName = (name: string) => name.normalize('NFC').trim();

/** A tag as stored: NFC-normalised (look-alikes are one tag). */
export const asStoredTag = (tag: string) => tag.normalize('NFC');

/** Why `text` cannot be stored as a name or tag, if it cannot: a lone surrogate (not Unicode) or a forbidden character. */
export function textProblem(text: string): string | undefined {
  if (!isWellFormed(text)) return 'must be valid Unicode (it holds a lone surrogate)';
  if (forbiddenCharacters.test(text)) return 'must not contain control characters or bidirectional overrides';
  return undefined;
}

/**
 * Entry names are path segments for clients that mirror folders to disks: no separators, no `.`/`..`,
 * no control characters or bidirectional overrides, a visible character at least (a name of only
 * zero-width characters shows as nothing), at most 255 characters. The name is stored NFC-
 * normalised and trimmed, so that names which look the same are the same for the uniqueness rule of a
 * folder (`é` typed as one character or as `e` + accent).
 */
export function validateEntryName(name: string, field = 'name'): string {
  const problem = textProblem(name);
  if (problem) throw illegalArguments(`${field} ${problem}`);
  const normalised = asStoredName(name);
  if (normalised.length === 0) throw illegalArguments(`${field} must not be empty`);
  if (invisible.test(normalised)) throw illegalArguments(`${field} must hold a visible character (it has only zero-width characters, marks or spaces)`);
  if (longerThan(normalised, 255)) throw illegalArguments(`${field} is longer than 255 characters`);
  if (normalised === '.' || normalised === '..') throw illegalArguments(`${field} must not be '.' or '..'`);
  if (/[/\\]/.test(normalised)) throw illegalArguments(`${field} must not contain '/' or '\\'`);
  return normalised;
}

/** At most as long as a registered type's name (POST A/type). */
const maxTypeNameLength = 128;

/**
 * A content's type name as given: any text a type may be called (quotes included), but no control
 * characters and at most 128 characters (it was unbounded: half a megabyte went into every search
 * answer). Empty or null means none; undefined, not given. Policies name types by the same rule
 * (`field`: the input's name).
 */
export function validateTypeName(typeName: string | null | undefined, field = 'typeName'): string | null | undefined {
  if (typeName === undefined) return undefined;
  if (typeName === null || typeName === '') return null;
  const problem = textProblem(typeName);
  if (problem) throw illegalArguments(`${field} ${problem}`);
  if (longerThan(typeName, maxTypeNameLength)) throw illegalArguments(`${field} is longer than ${maxTypeNameLength} characters`);
  return typeName;
}
