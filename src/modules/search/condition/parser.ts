import { illegalArguments } from '../../../errors.js';

/**
 * The condition language of `GET C/content/search/by-condition` (DESIGN §6, docs/search.md): a
 * hand-written tokenizer and recursive-descent parser producing an AST. `and` / `or` chains are parsed
 * by loops into n-ary nodes, so only parentheses and `not` recurse, and their depth is bounded.
 */

/** Documented bounds (docs/search.md). */
export const conditionLimits = { maxLength: 10_000, maxNesting: 32, maxSetSize: 1_000 } as const;

export type Literal =
  | { kind: 'string'; value: string; position: number }
  | { kind: 'number'; value: number; text: string; position: number }
  | { kind: 'boolean'; value: boolean; position: number };

/** A property as written: `name`, `parent.name`, `properties.color`; `position` is 1-based. */
export interface PropertyPath {
  text: string;
  position: number;
}

export type ComparisonOperator = '=' | '!=' | '<' | '<=' | '>' | '>=';

export type ConditionNode =
  | { type: 'and' | 'or'; items: ConditionNode[] }
  | { type: 'not'; item: ConditionNode }
  | { type: 'compare'; property: PropertyPath; operator: ComparisonOperator; value: Literal }
  | { type: 'like'; property: PropertyPath; caseInsensitive: boolean; pattern: Literal }
  /** `<property> in (v1, v2, …)` */
  | { type: 'inSet'; property: PropertyPath; values: Literal[] }
  /** `'<value>' in <collection property>` */
  | { type: 'contains'; property: PropertyPath; value: Literal }
  | { type: 'fullText'; text: string; position: number };

type Token =
  | { kind: 'word'; text: string; position: number }
  | { kind: 'string'; value: string; position: number }
  | { kind: 'number'; text: string; position: number }
  | { kind: 'symbol'; text: '(' | ')' | ','; position: number }
  | { kind: 'operator'; text: ComparisonOperator | '<>'; position: number }
  | { kind: 'end'; position: number };

const keywords = new Set(['and', 'or', 'not', 'in', 'like', 'ilike', 'true', 'false']);

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the condition';
    case 'string':
      return `'${token.value.length > 20 ? `${token.value.slice(0, 20)}…` : token.value}'`;
    case 'word':
      return keywords.has(token.text.toLowerCase()) ? `'${token.text}'` : `'${token.text.length > 40 ? `${token.text.slice(0, 40)}…` : token.text}'`;
    default:
      return `'${token.text}'`;
  }
}

const syntaxError = (position: number, problem: string) => illegalArguments(`condition: at position ${position}: ${problem}`);
const expected = (what: string, token: Token) => syntaxError(token.position, `expected ${what}, found ${describe(token)}`);

/** A path segment: a letter or `_`, then letters, digits, `_` or `-`. */
/** A name in a property path: a letter or _, then letters, digits, _ or - (docs/search.md). */
export const propertyNameSyntax = '[A-Za-z_][A-Za-z0-9_-]*';
const segment = new RegExp(propertyNameSyntax, 'y');
const number = /-?\d+(?:\.\d+)?(?![A-Za-z0-9_.])/y;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const position = i + 1;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: 'symbol', text: c, position });
      i++;
    } else if (c === '=') {
      tokens.push({ kind: 'operator', text: '=', position });
      i++;
    } else if (c === '!' || c === '<' || c === '>') {
      const two = source.slice(i, i + 2);
      if (two === '!=' || two === '<>' || two === '<=' || two === '>=') {
        tokens.push({ kind: 'operator', text: two, position });
        i += 2;
      } else if (c === '!') {
        throw syntaxError(position, "expected '!=' ('!' alone is not an operator)");
      } else {
        tokens.push({ kind: 'operator', text: c as '<' | '>', position });
        i++;
      }
    } else if (c === "'") {
      let value = '';
      let j = i + 1;
      for (;;) {
        const close = source.indexOf("'", j);
        if (close === -1) throw syntaxError(position, 'the quoted value starting here is not closed (write a quote inside a value as two quotes)');
        value += source.slice(j, close);
        if (source[close + 1] === "'") {
          value += "'";
          j = close + 2;
        } else {
          i = close + 1;
          break;
        }
      }
      tokens.push({ kind: 'string', value, position });
    } else {
      number.lastIndex = i;
      const numeric = number.exec(source);
      if (numeric) {
        tokens.push({ kind: 'number', text: numeric[0], position });
        i += numeric[0].length;
        continue;
      }
      segment.lastIndex = i;
      const word = segment.exec(source);
      if (!word) {
        // a number followed by more (1e3, 1.2.3, 12abc) is a malformed number, not a stray character
        if (/[-\d]/.test(c!) && /^-?\d/.test(source.slice(i, i + 2))) {
          throw syntaxError(position, `malformed number '${/^[-\w.]*/.exec(source.slice(i))![0].slice(0, 40)}' (a number is digits with an optional fraction: 1000, -2.5)`);
        }
        // a control or invisible character is named by its code point: printed, it looks like a space
        const shown = /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(c!) ? `'${c}'` : `U+${c!.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
        throw syntaxError(position, `unexpected character ${shown}`);
      }
      let text = word[0];
      i += text.length;
      // dot paths: parent.name, predecessor.parent.name, properties.color
      while (source[i] === '.') {
        segment.lastIndex = i + 1;
        const next = segment.exec(source);
        if (!next) throw syntaxError(i + 2, `expected a property name after '${text}.'`);
        text += `.${next[0]}`;
        i += next[0].length + 1;
      }
      tokens.push({ kind: 'word', text, position });
    }
  }
  tokens.push({ kind: 'end', position: source.length + 1 });
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  private get current(): Token {
    return this.tokens[this.index]!;
  }

  private isKeyword(word: string, token = this.current): boolean {
    return token.kind === 'word' && token.text.toLowerCase() === word;
  }

  private isSymbol(symbol: string, token = this.current): boolean {
    return token.kind === 'symbol' && token.text === symbol;
  }

  private advance(): Token {
    return this.tokens[this.index++]!;
  }

  parse(): ConditionNode {
    const node = this.or();
    if (this.current.kind !== 'end') throw expected("'and', 'or' or the end of the condition", this.current);
    return node;
  }

  private or(): ConditionNode {
    const items = [this.and()];
    while (this.isKeyword('or')) {
      this.advance();
      items.push(this.and());
    }
    return items.length === 1 ? items[0]! : { type: 'or', items };
  }

  private and(): ConditionNode {
    const items = [this.unary()];
    while (this.isKeyword('and')) {
      this.advance();
      items.push(this.unary());
    }
    return items.length === 1 ? items[0]! : { type: 'and', items };
  }

  /** `not` and parentheses are the only recursion; both count towards the nesting bound. */
  private nested<T>(position: number, inner: () => T): T {
    if (++this.depth > conditionLimits.maxNesting) {
      throw syntaxError(position, `nesting deeper than ${conditionLimits.maxNesting} levels of parentheses and 'not'`);
    }
    const result = inner();
    this.depth--;
    return result;
  }

  private unary(): ConditionNode {
    const token = this.current;
    if (this.isKeyword('not')) {
      this.advance();
      return this.nested(token.position, () => ({ type: 'not', item: this.unary() }));
    }
    if (this.isSymbol('(')) {
      this.advance();
      return this.nested(token.position, () => {
        const inner = this.or();
        if (!this.isSymbol(')')) throw expected("')' to close the parenthesis opened at position " + token.position, this.current);
        this.advance();
        return inner;
      });
    }
    return this.term();
  }

  private term(): ConditionNode {
    const token = this.current;
    if (token.kind === 'word' && token.text.toLowerCase() === 'fulltext' && this.isSymbol('(', this.tokens[this.index + 1])) {
      this.index += 2;
      const text = this.current;
      if (text.kind !== 'string') throw expected("a quoted text in fullText('…')", text);
      // as by-text refuses an empty searchText
      if (text.value === '') throw syntaxError(text.position, "fullText('') has no text to search for");
      this.advance();
      if (!this.isSymbol(')')) throw expected("')' after the text of fullText", this.current);
      this.advance();
      return { type: 'fullText', text: text.value, position: token.position };
    }
    const literal = this.literal(false);
    if (literal) {
      // '<value>' in <collection property>
      if (!this.isKeyword('in')) throw expected("'in' after a value (as in 'red' in tags)", this.current);
      this.advance();
      return { type: 'contains', value: literal, property: this.property() };
    }
    const property = this.property();
    const operator = this.current;
    if (operator.kind === 'operator') {
      this.advance();
      const value = this.literal(true)!;
      return { type: 'compare', property, operator: operator.text === '<>' ? '!=' : operator.text, value };
    }
    if (this.isKeyword('like') || this.isKeyword('ilike')) {
      const caseInsensitive = this.isKeyword('ilike');
      this.advance();
      const pattern = this.current;
      if (pattern.kind !== 'string') throw expected(`a quoted pattern after '${caseInsensitive ? 'ilike' : 'like'}'`, pattern);
      this.advance();
      return { type: 'like', property, caseInsensitive, pattern };
    }
    if (this.isKeyword('in')) {
      this.advance();
      if (!this.isSymbol('(')) throw expected("'(' to start the set of values after 'in'", this.current);
      this.advance();
      const values = [this.literal(true)!];
      while (this.isSymbol(',')) {
        this.advance();
        if (values.length >= conditionLimits.maxSetSize) {
          throw syntaxError(this.current.position, `a set after 'in' holds at most ${conditionLimits.maxSetSize} values`);
        }
        values.push(this.literal(true)!);
      }
      if (!this.isSymbol(')')) throw expected("',' or ')' in the set of values", this.current);
      this.advance();
      return { type: 'inSet', property, values };
    }
    throw expected("an operator (=, !=, <>, <, <=, >, >=, like, ilike, in)", operator);
  }

  private property(): PropertyPath {
    const token = this.current;
    if (token.kind !== 'word' || keywords.has(token.text.toLowerCase())) throw expected('a property name', token);
    this.advance();
    return { text: token.text, position: token.position };
  }

  /** A quoted text, a bare number or true/false; `required` turns its absence into an error. */
  private literal(required: boolean): Literal | undefined {
    const token = this.current;
    let literal: Literal | undefined;
    if (token.kind === 'string') literal = { kind: 'string', value: token.value, position: token.position };
    else if (token.kind === 'number') literal = { kind: 'number', value: Number(token.text), text: token.text, position: token.position };
    else if (this.isKeyword('true') || this.isKeyword('false')) {
      literal = { kind: 'boolean', value: this.isKeyword('true'), position: token.position };
    }
    if (literal) {
      this.advance();
      return literal;
    }
    if (required) throw expected('a value (a quoted text, a number, true or false)', token);
    return undefined;
  }
}

/** Parses a condition; a bad one is a 400 `illegalArguments` naming the position and what was expected. */
export function parseCondition(source: string): ConditionNode {
  if (source.length > conditionLimits.maxLength) {
    throw illegalArguments(`condition: longer than ${conditionLimits.maxLength} characters (${source.length})`);
  }
  if (source.trim() === '') throw illegalArguments('condition: must not be empty');
  return new Parser(tokenize(source)).parse();
}

/** The texts of a condition's fullText() terms, in order. */
export function fullTextTexts(node: ConditionNode): string[] {
  if (node.type === 'fullText') return [node.text];
  if (node.type === 'and' || node.type === 'or') return node.items.flatMap(fullTextTexts);
  if (node.type === 'not') return fullTextTexts(node.item);
  return [];
}

/** The properties a condition names, as written (`parent.name` stays `parent.name`). */
export function namedProperties(node: ConditionNode): string[] {
  switch (node.type) {
    case 'and':
    case 'or':
      return node.items.flatMap(namedProperties);
    case 'not':
      return namedProperties(node.item);
    case 'fullText':
      return [];
    default:
      return [node.property.text];
  }
}
