import { readableJoinCondition } from '../../access/policy.js';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../errors.js';
import { compileCondition } from './compile.js';
import { conditionLimits, parseCondition } from './parser.js';

const options = { fullTextEnabled: true, repositoryId: 'svc.repository.default', repositoryName: 'default' };
const compile = (condition: string) => compileCondition(parseCondition(condition), options);

/** The 400 (or other) a condition is refused with. */
function refusal(condition: string): { status: number; reasonCode: string; message: string } {
  try {
    compile(condition);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    const { status, reasonCode, message } = error as ServiceError;
    return { status, reasonCode, message };
  }
  throw new Error(`accepted: ${condition}`);
}

describe('condition parser', () => {
  it('gives and a higher precedence than or, and not the highest', () => {
    expect(parseCondition("name = 'a' or name = 'b' and owner = 'c'")).toMatchObject({
      type: 'or',
      items: [{ type: 'compare', property: { text: 'name' } }, { type: 'and', items: [{ type: 'compare' }, { type: 'compare' }] }],
    });
    expect(parseCondition("not name = 'a' and owner = 'c'")).toMatchObject({ type: 'and', items: [{ type: 'not' }, { type: 'compare' }] });
    expect(parseCondition("(name = 'a' or name = 'b') and owner = 'c'")).toMatchObject({ type: 'and', items: [{ type: 'or' }, { type: 'compare' }] });
  });

  it('reads quoted values with doubled quotes, bare numbers, booleans, <> and case-insensitive keywords', () => {
    expect(parseCondition("name = 'it''s'")).toMatchObject({ value: { kind: 'string', value: "it's" } });
    expect(parseCondition("name = ''''")).toMatchObject({ value: { kind: 'string', value: "'" } });
    expect(parseCondition('resource.fileSize >= -12.5')).toMatchObject({ operator: '>=', value: { kind: 'number', text: '-12.5' } });
    expect(parseCondition('active = TRUE')).toMatchObject({ value: { kind: 'boolean', value: true } });
    expect(parseCondition("name <> 'a'")).toMatchObject({ operator: '!=' });
    expect(parseCondition("'red' IN tags AND name LIKE 'a*' Or name ILIKE '*B'")).toMatchObject({ type: 'or' });
    expect(parseCondition("name in ('a', 'b', 3)")).toMatchObject({ type: 'inSet', values: [{ value: 'a' }, { value: 'b' }, { text: '3' }] });
    expect(parseCondition("fullText('quarterly report') and name = 'x'")).toMatchObject({ type: 'and', items: [{ type: 'fullText', text: 'quarterly report' }, {}] });
  });

  it('names the position and what was expected in every syntax error', () => {
    const cases: [string, string][] = [
      ["name = 'a' and", "at position 15: expected a property name, found the end of the condition"],
      ["name 'a'", "at position 6: expected an operator (=, !=, <>, <, <=, >, >=, like, ilike, in), found 'a'"],
      ['name = ', 'at position 8: expected a value (a quoted text, a number, true or false), found the end of the condition'],
      ["name = 'a", 'at position 8: the quoted value starting here is not closed'],
      ["(name = 'a'", "at position 12: expected ')' to close the parenthesis opened at position 1"],
      ["name = 'a')", "at position 11: expected 'and', 'or' or the end of the condition, found ')'"],
      ["name ! 'a'", "at position 6: expected '!='"],
      ["name = 'a' ; drop table entry", "at position 12: unexpected character ';'"],
      ['fileSize > 1e3', "at position 12: malformed number '1e3' (a number is digits with an optional fraction: 1000, -2.5)"],
      ["name = 1.2.3", "at position 8: malformed number '1.2.3'"],
      ['\u0000', 'at position 1: unexpected character U+0000'],
      ["name like 5", "at position 11: expected a quoted pattern after 'like'"],
      ["name in 'a'", "at position 9: expected '(' to start the set of values after 'in'"],
      ["name in ('a' 'b')", "at position 14: expected ',' or ')' in the set of values, found 'b'"],
      ["'red' tags", "at position 7: expected 'in' after a value (as in 'red' in tags), found 'tags'"],
      ['fullText(quarterly)', "at position 10: expected a quoted text in fullText('…'), found 'quarterly'"],
      ["name = 'a' or fullText('')", "at position 24: fullText('') has no text to search for"],
      ["parent. = 'a'", "at position 8: expected a property name after 'parent.'"],
      ["and = 'a'", "at position 1: expected a property name, found 'and'"],
    ];
    for (const [condition, message] of cases) {
      const { status, reasonCode, message: actual } = refusal(condition);
      expect({ condition, status, reasonCode }).toEqual({ condition, status: 400, reasonCode: 'illegalArguments' });
      expect(actual).toContain(`condition: ${message}`);
    }
  });

  it('refuses unknown properties by name, and values of the wrong kind', () => {
    expect(refusal("colour = 'red'").message).toContain("unknown property 'colour' at position 1");
    expect(refusal("parent.colour = 'red'").message).toContain("unknown property 'parent.colour'");
    expect(refusal("resource.parent.name = 'x'").message).toContain("unknown property 'resource.parent.name'");
    expect(refusal("constructor = 'x'").message).toContain("unknown property 'constructor'");
    expect(refusal("__proto__.name = 'x'").message).toContain("unknown property '__proto__.name'");
    expect(refusal("parent.parent.parent.parent.parent.parent.name = 'x'").message).toContain('deeper than 5 links');
    expect(refusal("createdAt = 'yesterday'").message).toContain("createdAt is a date; 'yesterday' at position 13 is not one");
    expect(refusal("createdAt > '2026-02-30'").message).toContain('is a date');
    expect(refusal("resource.fileSize > 'big'").message).toContain('resource.fileSize is a number');
    expect(refusal('name = true').message).toContain('name is a text');
    expect(refusal("active > true").message).toContain('compare it with = or !=');
    expect(refusal("version > '1'").message).toContain("version is a version like '1.0'");
    expect(refusal("tags = 'red'").message).toContain("write '<value>' in tags");
    expect(refusal("createdAt like '2026*'").message).toContain('like needs a text property; createdAt at position 1 is a date');
    expect(refusal("'red' in name").message).toContain("'in' after a value needs a collection property");
    expect(refusal("fullText('x') and tags in ()").message).toContain('position 28: expected a value');
  });

  it('answers fullText() with a 409 when the repository has full text disabled', () => {
    expect(() => compileCondition(parseCondition("fullText('x')"), { fullTextEnabled: false, repositoryId: 'svc.repository.quiet', repositoryName: 'quiet' })).toThrow(
      expect.objectContaining({ status: 409, reasonCode: 'conflict', message: expect.stringContaining("full text is disabled for repository 'quiet'") }),
    );
  });

  it('keeps every value out of the SQL: values are parameters, identifiers come from the whitelist', () => {
    const hostile = "x'); drop table entry; --";
    const { sql, params, joins } = compile(
      `name = '${hostile.replaceAll("'", "''")}' or properties.${'a'.repeat(3)} = '${hostile.replaceAll("'", "''")}' or parent.name like '*${hostile.replaceAll("'", "''")}*'`,
    );
    expect(sql).not.toContain('drop');
    expect(sql).not.toContain('aaa');
    expect(params).toEqual([hostile, 'aaa', hostile, `%${hostile}%`]);
    // the joined folder is there only when the caller may read it (read from the statement's crs_reader, no value of its own)
    expect([...joins!.values()]).toEqual([`left join entry j_p on j_p.id = e.parent_id and ${readableJoinCondition('j_p')}`]);
  });

  it('reads dates in UTC unless a zone is given; a date alone means its whole day, a time its minute, second or millisecond', () => {
    expect(compile("createdAt > '2026-11-22T10:00:00.000+0100'")).toMatchObject({ sql: 'e.created_at >= ?::timestamptz', params: ['2026-11-22T09:00:00.001Z'] });
    expect(compile("createdAt > '2026-11-22T10:00:00.000+0000'").params).toEqual(['2026-11-22T10:00:00.001Z']);
    expect(compile("createdAt = '2026-11-22T10:00:00.123456Z'").params).toEqual(['2026-11-22T10:00:00.123Z', '2026-11-22T10:00:00.124Z']);
    expect(compile("createdAt < '2026-11-22T10:00-02:30'").params).toEqual(['2026-11-22T12:30:00.000Z']);
    expect(compile("createdAt <= '2026-11-22T10:00-02:30'").params).toEqual(['2026-11-22T12:31:00.000Z']);
    expect(compile("createdAt >= '2026-11-22 10:00:05'").params).toEqual(['2026-11-22T10:00:05.000Z']);
    expect(compile("createdAt > '2026-11-22 10:00:05'").params).toEqual(['2026-11-22T10:00:06.000Z']);
    const day = compile("lockedAt = '2026-11-22'");
    expect(day.sql).toBe('(e.locked_at >= ?::timestamptz and e.locked_at < ?::timestamptz)');
    expect(day.params).toEqual(['2026-11-22T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    expect(compile("createdAt <= '2026-12-31'")).toMatchObject({ sql: 'e.created_at < ?::timestamptz', params: ['2027-01-01T00:00:00.000Z'] });
    expect(compile("createdAt > '2026-12-31'")).toMatchObject({ sql: 'e.created_at >= ?::timestamptz', params: ['2027-01-01T00:00:00.000Z'] });
    expect(compile("createdAt < '0001-01-01'").params).toEqual(['0001-01-01T00:00:00.000Z']);
    // the last three: moved out of years 1–9998 by their offset (the first of them was a 500 from Postgres)
    for (const bad of ['2026-13-01', '2026-11-22T24:00', '2026-11-22T10:00+1900', '0000-01-01', '9999-01-01', '2026-11-22T10:00:00.000+00', '0001-01-01T00:00:00+01:00', '0001-01-01T00:30+14:00', '9998-12-31T23:00-02:00']) {
      expect(refusal(`createdAt > '${bad}'`).message).toContain('createdAt is a date');
    }
  });

  it('translates like patterns: * is the only wildcard, % _ and \\ are literal', () => {
    expect(compile("name like 'a*b%c_d\\e*'").params).toEqual(['a%b\\%c\\_d\\\\e%']);
  });

  it('pushes not down to the terms: a negated term is "is not true", and/or swap', () => {
    const { sql } = compile("not (name = 'a' and (owner != 'b' or 'x' in tags))");
    expect(sql).toBe('((e.name = ?::text) is not true or (e.owner = ?::text and (e.tags @> ?::text[]) is not true))');
  });

  it('joins each dot-path prefix once, nested up to five links', () => {
    const { joins } = compile("predecessor.parent.name = 'a' and predecessor.parent.parent.resource.name = 'b' and predecessor.version = '1.0' and resource.fileSize > 1");
    expect([...joins!.keys()]).toEqual(['j_v', 'j_vp', 'j_vpp', 'j_vppr']);
    expect(joins!.get('j_vppr')).toBe('left join resource j_vppr on j_vppr.id = j_vpp.resource_id');
  });

  it('bounds length, nesting and set size with 400s, never a stack overflow', () => {
    const deep = `${'('.repeat(10_000)}name = 'a'${')'.repeat(10_000)}`;
    expect(refusal(deep).message).toContain(`longer than ${conditionLimits.maxLength} characters`);
    const nested = `${'('.repeat(conditionLimits.maxNesting + 1)}name = 'a'${')'.repeat(conditionLimits.maxNesting + 1)}`;
    expect(refusal(nested).message).toContain(`at position ${conditionLimits.maxNesting + 1}: nesting deeper than ${conditionLimits.maxNesting}`);
    expect(refusal(`${'not '.repeat(100)}name = 'a'`).message).toContain('nesting deeper than');
    const allowed = `${'('.repeat(conditionLimits.maxNesting)}name = 'a'${')'.repeat(conditionLimits.maxNesting)}`;
    expect(compile(allowed).params).toEqual(['a']);
    const set = (n: number) => `name in (${Array.from({ length: n }, (_, i) => `'${i}'`).join(',')})`;
    expect(compile(set(conditionLimits.maxSetSize)).params[0]).toHaveLength(conditionLimits.maxSetSize);
    expect(refusal(set(conditionLimits.maxSetSize + 1)).message).toContain(`holds at most ${conditionLimits.maxSetSize} values`);
    expect(refusal(set(100_000)).message).toContain('longer than');
    expect(refusal('   ').message).toContain('must not be empty');
  });
});
