import { illegalArguments } from '../../errors.js';

/*
 * Media types as RFC 6838 names them (`type/subtype`, restricted names) with optional RFC 9110
 * parameters (`; name=token` or `; name="quoted"`), printable ASCII only: a stored media type becomes
 * a Content-Type header, where a control character or a non-Latin-1 one breaks the response (or
 * smuggles a header). The same pattern repairs stored values (Migration20261122220000RepairMediaTypes),
 * so it is written in the regular-expression dialect JavaScript and Postgres share.
 */
const restrictedName = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}';
const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
export const mediaTypePattern = `^${restrictedName}/${restrictedName}( *; *${token}=(${token}|"[^"\\\\]*"))* *$`;
export const maxMediaTypeLength = 255;
/** what a stored value that breaks the rule becomes */
export const fallbackMediaType = 'application/octet-stream';

const mediaType = new RegExp(mediaTypePattern);
const printableAscii = /^[ -~]*$/;

/** A client's media type, trimmed, or a 400 that names the field. */
export function validateMediaType(value: string, field = 'mimeType'): string {
  const trimmed = value.trim();
  if (trimmed.length > maxMediaTypeLength) throw illegalArguments(`${field} is longer than ${maxMediaTypeLength} characters`);
  if (!printableAscii.test(trimmed) || !mediaType.test(trimmed)) {
    throw illegalArguments(`${field}: '${JSON.stringify(trimmed).slice(1, -1)}' is not a media type (type/subtype with optional parameters, printable ASCII)`);
  }
  return trimmed;
}

/** An optional media type: absent or empty means "sniff it from the bytes". */
export const optionalMediaType = (value: string | null | undefined, field?: string): string | undefined =>
  value === undefined || value === null || value === '' ? undefined : validateMediaType(value, field);
