/** `yyyy-MM-ddTHH:mm:ss.SSS+0000` (spec "Dates"; DESIGN §0: UTC). */
export function restDate(value: string | Date | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  // GraphQL's DateTimeISO already writes UTC with milliseconds: only the zone is rewritten (no Date parsed per field)
  if (typeof value === 'string' && isoUtc.test(value)) return `${value.slice(0, 23)}+0000`;
  const date = typeof value === 'string' ? new Date(value) : value;
  return `${date.toISOString().slice(0, 23)}+0000`;
}

const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The date fields of the administration domain's records (repositories, users, policies, types, statistics, webhooks). */
const recordDateFields = new Set(['createdAt', 'modifiedAt', 'executionDate', 'lastModifiedAt', 'failingSince']);

/**
 * A record of the administration domain with its dates in the REST form: the GraphQL result carries
 * ISO dates (`…Z`), the spec's "Dates" want `+0000`. Fields by name, so a name or property that merely
 * looks like a date stays as it is.
 */
export function withRestDates<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => withRestDates(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [key, recordDateFields.has(key) && typeof field === 'string' ? restDate(field) : withRestDates(field)]),
  ) as T;
}

const restDatePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})([+-])(\d{2})(\d{2})$/;

/**
 * A date as a REST request writes it (spec "Dates": `yyyy-MM-ddTHH:mm:ss.SSS` and a numeric zone
 * offset such as `+0000` or `+0130`), or undefined when it is not one (a day or hour that does not
 * exist included: JavaScript would roll `02-31` over into March).
 */
export function parseRestDate(text: string): Date | undefined {
  const match = restDatePattern.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second, millisecond, sign, offsetHours, offsetMinutes] = match.slice(1);
  const fields = [year, month, day, hour, minute, second, millisecond, offsetHours, offsetMinutes].map(Number) as number[];
  const [y, mo, d, h, mi, s, ms, oh, om] = fields as [number, number, number, number, number, number, number, number, number];
  const local = new Date(Date.UTC(y, mo - 1, d, h, mi, s, ms));
  const exists = local.getUTCFullYear() === y && local.getUTCMonth() === mo - 1 && local.getUTCDate() === d && local.getUTCHours() === h;
  if (!exists || oh > 23 || om > 59) return undefined;
  return new Date(local.getTime() - (sign === '-' ? -1 : 1) * (oh * 60 + om) * 60_000);
}
