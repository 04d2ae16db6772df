import { conflict, illegalArguments } from '../../../errors.js';
import { fullTextMatch } from '../../fulltext/query.js';
import type { SqlPredicate, TagFormula } from '../entry-query.js';
import type { ComparisonOperator, ConditionNode, Literal } from './parser.js';
import { PropertyResolver, type ResolvedProperty } from './properties.js';

/**
 * Compiles a parsed condition into one parameterised SQL predicate over `e` (the entry), `r` (its
 * resource) and the joins its dot paths need. Every value is a `?` parameter with an explicit cast.
 *
 * Logic is two-valued: a missing value (no parent, no lock) matches no comparison, and `!=` / `not`
 * match it. Negations are pushed down to the terms (De Morgan), and a negated term is `(…) is not
 * true`, so positive terms stay plain index-friendly comparisons.
 */

export interface CompileOptions {
  fullTextEnabled: boolean;
  /** the repository searched: its id for the text index, its name for messages */
  repositoryId: string;
  repositoryName: string;
  /** fullText() terms resolved beforehand by a remote text index (Meilisearch); else the Postgres index */
  fullTextTerms?: ReadonlyMap<string, Sql>;
}

type Sql = { sql: string; params: unknown[] };

const at = (literal: Literal) => `at position ${literal.position}`;
const shown = (literal: Literal) => (literal.kind === 'string' ? `'${literal.value}'` : String(literal.kind === 'number' ? literal.text : literal.value));

/** A condition's text as the property's values are stored: `é` typed as `e` + accent, or ` a.txt `, finds the name `a.txt` with `é`. */
const asStored = (property: ResolvedProperty, text: string) => property.asStored?.(text) ?? text;

function textOf(property: ResolvedProperty, literal: Literal): string {
  if (literal.kind === 'string') return asStored(property, literal.value);
  if (literal.kind === 'number') return literal.text;
  throw illegalArguments(`condition: ${property.name} is a text; ${shown(literal)} ${at(literal)} is not (quote it)`);
}

const bigintRange = 9223372036854775807n;
/** A number as a condition writes it, bare or quoted. */
const numberPattern = /^-?\d{1,1000}(\.\d{1,1000})?$/;

/** A number for a numeric property: bare or quoted; bigint when it is a whole number in range (index use). */
function numberOf(property: ResolvedProperty, literal: Literal): { value: string; cast: 'bigint' | 'numeric' } {
  const text = literal.kind === 'number' ? literal.text : literal.kind === 'string' ? literal.value.trim() : '';
  if (!numberPattern.test(text)) {
    throw illegalArguments(`condition: ${property.name} is a number; ${shown(literal)} ${at(literal)} is not one`);
  }
  const whole = !text.includes('.') && BigInt(text) <= bigintRange && BigInt(text) >= -bigintRange;
  return { value: text, cast: whole ? 'bigint' : 'numeric' };
}

const datePattern = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * The span a date names: a day when only the date is given, else the minute, the second or (with a
 * fraction) the millisecond of the time given — the precision in which dates are shown, while they
 * are stored to the microsecond: the `createdAt` a search returns finds that entry with `=`.
 * Zoneless times are UTC (as REST dates are).
 */
function dateOf(property: ResolvedProperty, literal: Literal): { start: string; end: string } {
  const bad = () =>
    illegalArguments(`condition: ${property.name} is a date; ${shown(literal)} ${at(literal)} is not one (yyyy-MM-dd, or yyyy-MM-ddTHH:mm:ss.SSS+0000)`);
  if (literal.kind !== 'string') throw bad();
  const match = datePattern.exec(literal.value.trim());
  if (!match) throw bad();
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '0', zone] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  if (year < 1 || year > 9998) throw bad();
  const utc = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis));
  utc.setUTCFullYear(year); // Date.UTC maps years below 100 to 19xx
  if (utc.getUTCMonth() !== month - 1 || utc.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) throw bad();
  let offsetMinutes = 0;
  if (zone && zone !== 'Z') {
    const digits = zone.replace(':', '');
    const zh = Number(digits.slice(1, 3));
    const zm = Number(digits.slice(3, 5));
    if (zh > 18 || zm > 59) throw bad();
    offsetMinutes = (digits[0] === '-' ? -1 : 1) * (zh * 60 + zm);
  }
  const start = new Date(utc.getTime() - offsetMinutes * 60_000);
  // the offset may move the instant out of the years Postgres and toISOString read alike
  // ('0001-01-01T00:00+01:00' is in year 0: a 500 from Postgres)
  if (start.getUTCFullYear() < 1 || start.getUTCFullYear() > 9998) throw bad();
  const spanMs = match[4] === undefined ? 86_400_000 : match[6] === undefined ? 60_000 : match[7] === undefined ? 1_000 : 1;
  return { start: start.toISOString(), end: new Date(start.getTime() + spanMs).toISOString() };
}

function booleanOf(property: ResolvedProperty, literal: Literal): boolean {
  if (literal.kind === 'boolean') return literal.value;
  if (literal.kind === 'string' && (literal.value === 'true' || literal.value === 'false')) return literal.value === 'true';
  throw illegalArguments(`condition: ${property.name} is true or false; ${shown(literal)} ${at(literal)} is neither`);
}

function versionOf(property: ResolvedProperty, literal: Literal): [number, number] {
  const text = literal.kind === 'number' ? literal.text : literal.kind === 'string' ? literal.value : '';
  const match = /^(\d{1,9})\.(\d{1,9})$/.exec(text);
  if (!match) throw illegalArguments(`condition: ${property.name} is a version like '1.0'; ${shown(literal)} ${at(literal)} is not one`);
  return [Number(match[1]), Number(match[2])];
}

/** `<property> <op> <value>` for a positive operator (`!=` is compiled as a negated `=`). */
function comparison(property: ResolvedProperty, operator: Exclude<ComparisonOperator, '!='>, literal: Literal): Sql {
  const column = property.sql;
  switch (property.kind) {
    case 'text':
      return { sql: `${column} ${operator} ?::text`, params: [textOf(property, literal)] };
    case 'number': {
      const { value, cast } = numberOf(property, literal);
      return { sql: `${column} ${operator} ?::${cast}`, params: [value] };
    }
    case 'date': {
      const { start, end } = dateOf(property, literal);
      // a span (a day, a millisecond…): = means within it; < before it; <= up to its end; > after it; >= from its start
      if (operator === '=') return { sql: `(${column} >= ?::timestamptz and ${column} < ?::timestamptz)`, params: [start, end] };
      const bound = { '<': ['<', start], '<=': ['<', end], '>': ['>=', end], '>=': ['>=', start] }[operator] as [string, string];
      return { sql: `${column} ${bound[0]} ?::timestamptz`, params: [bound[1]] };
    }
    case 'boolean':
      if (operator !== '=') throw illegalArguments(`condition: ${property.name} is true or false: compare it with = or != (${at(literal)})`);
      return { sql: `${column} = ?::boolean`, params: [booleanOf(property, literal)] };
    case 'version': {
      const [major, minor] = versionOf(property, literal);
      const [majorColumn, minorColumn] = property.versionColumns!;
      return { sql: `(${majorColumn}, ${minorColumn}) ${operator} (?::int, ?::int)`, params: [major, minor] };
    }
    case 'json':
      return jsonComparison(property, operator, literal);
    case 'tags':
      throw illegalArguments(`condition: ${property.name} is a collection: write '<value>' in ${property.name}, or ${property.name} in ('a', 'b') (${at(literal)})`);
  }
}

/** `properties.<key>`: the value's kind decides whether the key is compared as text, number or boolean. */
function jsonComparison(property: ResolvedProperty, operator: Exclude<ComparisonOperator, '!='>, literal: Literal): Sql {
  const [json, key] = [property.sql, property.jsonKey!];
  const asNumber = `(case when jsonb_typeof(${json} -> ?::text) = 'number' then (${json} ->> ?::text)::numeric end) ${operator} ?::numeric`;
  if (literal.kind === 'string') {
    // a quoted number compares as a number with a number, as text with a text ('1000' > '200' as text)
    if (numberPattern.test(literal.value.trim())) {
      return {
        sql: `(case when jsonb_typeof(${json} -> ?::text) = 'number' then ${asNumber} else (${json} ->> ?::text) ${operator} ?::text end)`,
        params: [key, key, key, literal.value.trim(), key, literal.value],
      };
    }
    return { sql: `(${json} ->> ?::text) ${operator} ?::text`, params: [key, literal.value] };
  }
  if (literal.kind === 'number') return { sql: asNumber, params: [key, key, literal.text] };
  if (operator !== '=') throw illegalArguments(`condition: true and false compare with = or != only (${at(literal)})`);
  return { sql: `(${json} -> ?::text) = ?::jsonb`, params: [key, JSON.stringify(literal.value)] };
}

const likePattern = (pattern: string) => pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replaceAll('*', '%');

class Compiler {
  constructor(
    private readonly resolver: PropertyResolver,
    private readonly options: CompileOptions,
  ) {}

  compile(node: ConditionNode, negated: boolean): Sql {
    switch (node.type) {
      case 'and':
      case 'or': {
        const parts = node.items.map((item) => this.compile(item, negated));
        const joiner = (node.type === 'and') !== negated ? ' and ' : ' or ';
        return { sql: `(${parts.map((p) => p.sql).join(joiner)})`, params: parts.flatMap((p) => p.params) };
      }
      case 'not':
        return this.compile(node.item, !negated);
      case 'compare': {
        const property = this.resolver.resolve(node.property.text, node.property.position);
        if (node.operator === '!=') return this.term(comparison(property, '=', node.value), !negated);
        return this.term(comparison(property, node.operator, node.value), negated);
      }
      default:
        return this.term(this.leaf(node), negated);
    }
  }

  private term(term: Sql, negated: boolean): Sql {
    return negated ? { sql: `(${term.sql}) is not true`, params: term.params } : term;
  }

  private leaf(node: Extract<ConditionNode, { type: 'like' | 'inSet' | 'contains' | 'fullText' }>): Sql {
    if (node.type === 'fullText') return this.fullText(node.text, node.position);
    const property = this.resolver.resolve(node.property.text, node.property.position);
    if (node.type === 'like') {
      const operator = node.caseInsensitive ? 'ilike' : 'like';
      // normalised, not trimmed: a pattern's spaces are part of what it asks for
      const text = (node.pattern as Extract<Literal, { kind: 'string' }>).value;
      const pattern = likePattern(property.asStored ? text.normalize('NFC') : text);
      if (property.kind === 'text' || property.kind === 'version') return { sql: `${property.sql} ${operator} ?::text`, params: [pattern] };
      if (property.kind === 'json') return { sql: `(${property.sql} ->> ?::text) ${operator} ?::text`, params: [property.jsonKey, pattern] };
      throw illegalArguments(`condition: ${operator} needs a text property; ${property.name} at position ${node.property.position} is a ${property.kind === 'tags' ? 'collection' : property.kind}`);
    }
    if (node.type === 'contains') {
      if (property.kind === 'tags') return { sql: `${property.sql} @> ?::text[]`, params: [[textOf(property, node.value)]] };
      if (property.kind === 'json') {
        const cast = node.value.kind === 'string' ? 'text' : node.value.kind === 'number' ? 'numeric' : 'boolean';
        const value = node.value.kind === 'number' ? node.value.text : node.value.value;
        return { sql: `coalesce((${property.sql} -> ?::text) @> to_jsonb(?::${cast}), false)`, params: [property.jsonKey, value] };
      }
      throw illegalArguments(
        `condition: 'in' after a value needs a collection property (tags or properties.<name>); ${property.name} at position ${node.property.position} is not one`,
      );
    }
    // <property> in (v1, v2, …)
    if (property.kind === 'tags') return { sql: `${property.sql} && ?::text[]`, params: [node.values.map((v) => textOf(property, v))] };
    if (property.kind === 'text') return { sql: `${property.sql} = any(?::text[])`, params: [node.values.map((v) => textOf(property, v))] };
    if (property.kind === 'json' && node.values.every((v) => v.kind === 'string')) {
      return { sql: `(${property.sql} ->> ?::text) = any(?::text[])`, params: [property.jsonKey, node.values.map((v) => textOf(property, v))] };
    }
    const parts = node.values.map((value) => comparison(property, '=', value));
    return { sql: `(${parts.map((p) => p.sql).join(' or ')})`, params: parts.flatMap((p) => p.params) };
  }

  /** The full-text index (src/modules/fulltext/query.ts): the name's words or the extracted text match. */
  private fullText(text: string, position: number): Sql {
    if (!this.options.fullTextEnabled) throw conflict(`condition: fullText() at position ${position}: full text is disabled for repository '${this.options.repositoryName}'`);
    return this.options.fullTextTerms?.get(text) ?? fullTextMatch(this.options.repositoryId, text);
  }
}

/**
 * The condition over one entry's tags (entry_visible_tag, for its count) when it asks for nothing but
 * the root entry's `tags`, without negation; else undefined. Runs after the compiler has checked it.
 */
function tagFormulaOf(node: ConditionNode): TagFormula | undefined {
  const text = (literal: Literal) => (literal.kind === 'number' ? literal.text : String(literal.value));
  switch (node.type) {
    case 'and':
    case 'or': {
      const parts = node.items.map(tagFormulaOf);
      if (!parts.every((part): part is TagFormula => part !== undefined)) return undefined;
      return {
        sql: `(${parts.map((p) => p.sql).join(` ${node.type} `)})`,
        params: parts.flatMap((p) => p.params),
        tags: parts.flatMap((p) => p.tags),
        anyOf: (node.type === 'or' || parts.length === 1) && parts.every((p) => p.anyOf),
      };
    }
    case 'contains':
      return node.property.text === 'tags' ? { sql: 'bool_or(v.tag = ?)', params: [text(node.value)], tags: [text(node.value)], anyOf: true } : undefined;
    case 'inSet': {
      if (node.property.text !== 'tags') return undefined;
      const tags = node.values.map(text);
      return { sql: 'bool_or(v.tag = any(?::text[]))', params: [tags], tags, anyOf: true };
    }
    default:
      return undefined;
  }
}

/** A condition as one predicate (with the joins it needs); unknown properties and mistyped values are 400s. */
export function compileCondition(node: ConditionNode, options: CompileOptions): SqlPredicate {
  const resolver = new PropertyResolver();
  const { sql, params } = new Compiler(resolver, options).compile(node, false);
  return { sql, params, joins: resolver.joins, tagFormula: tagFormulaOf(node) };
}
