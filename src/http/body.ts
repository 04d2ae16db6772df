import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { illegalArguments, ServiceError } from '../errors.js';

const maxBodyBytes = 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body is larger than ${limit} bytes`);
  }
}

export class InvalidUtf8Error extends Error {
  constructor() {
    super('the request body is not valid UTF-8');
  }
}

/** Refuses bytes that are not UTF-8 (they would be stored as U+FFFD, the name or text lost). */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether percent-decoding `text` (a URL's path or query, a form field) gives UTF-8; a `%` that starts
 * no escape stays as it is, as the URL and form parsers keep it.
 */
export function percentDecodesAsUtf8(text: string): boolean {
  try {
    strictUtf8.decode(Buffer.from(text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1'));
    return true;
  } catch {
    return false;
  }
}

/**
 * A request body as text, at most `limit` bytes (JSON and form bodies, GraphQL operations): a declared
 * Content-Length over the limit is refused before anything is read, bytes that are not UTF-8 after.
 */
export async function readBoundedText(req: IncomingMessage, limit: number): Promise<string> {
  const bytes = await readBoundedBytes(req, limit);
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new InvalidUtf8Error();
  }
}

async function readBoundedBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  if (Number(req.headers['content-length']) > limit) throw new BodyTooLargeError(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

async function readText(ctx: Context): Promise<string> {
  try {
    return await readBoundedText(ctx.req, maxBodyBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new ServiceError('tooLarge', error.message);
    if (error instanceof InvalidUtf8Error) throw illegalArguments(error.message);
    throw error;
  }
}

/** Nesting a JSON value (a body, GraphQL variables) may have: the deepest the service takes (properties, 16 levels) fits well within it. */
export const maxJsonDepth = 64;

/**
 * What makes a parsed JSON value unusable, found without recursion (a hostile value may be very deep):
 * a non-finite number (`1e309` parses to Infinity, which would become null on its way on), or nesting
 * deeper than maxJsonDepth (the GraphQL scalars that read it recurse, and 100,000 nested arrays
 * overflowed the stack with a RangeError as the answer's message).
 */
export function jsonValueProblem(value: unknown): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current === 'number' && !Number.isFinite(current)) return 'a number is out of range (JSON cannot carry it; the largest is about 1.8e308)';
    if (current !== null && typeof current === 'object') {
      if (depth >= maxJsonDepth) return `nested deeper than ${maxJsonDepth} levels`;
      for (const child of Object.values(current)) stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

/**
 * JSON text as a value; malformed JSON, or a number JSON cannot hold (`1e309` parses to Infinity and
 * would silently become null on the way to the database), is a 400 naming `what`.
 */
export function parseJson(text: string, what: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw illegalArguments(`malformed ${what}: ${(error as Error).message}`);
  }
  const problem = jsonValueProblem(value);
  if (problem) throw illegalArguments(`malformed ${what}: ${problem}`);
  return value;
}

/** A JSON object body (empty body = {}); malformed JSON is a 400 that says so. */
export async function readJsonObject(ctx: Context): Promise<Record<string, unknown>> {
  // media types are case-insensitive (RFC 9110 §8.3.1)
  const type = ctx.request.type.toLowerCase();
  const text = await readText(ctx);
  if (text.trim() === '') return {};
  // checked after reading: an empty body of any type is an empty object
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new ServiceError('unsupportedMediaType', `expected a JSON body (Content-Type: application/json), got ${type ? `'${type}'` : 'none'}`);
  }
  const value = parseJson(text, 'JSON body');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw illegalArguments('the JSON body must be an object');
  return value as Record<string, unknown>;
}

/**
 * Form fields (application/x-www-form-urlencoded) as repeated-value lists, or a JSON object's fields.
 * A field whose percent-escapes are not UTF-8 (`name=%ED%A0%80`) is a 400 naming it: URLSearchParams
 * would put U+FFFD in their place, as the URL middleware refuses for queries.
 */
export async function readForm(ctx: Context): Promise<Record<string, string | string[]>> {
  if (ctx.request.is('application/json')) {
    const json = await readJsonObject(ctx);
    return Object.fromEntries(
      Object.entries(json).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)]),
    );
  }
  const text = await readText(ctx);
  for (const field of text.split('&')) {
    if (percentDecodesAsUtf8(field)) continue;
    const [name] = new URLSearchParams(field).keys();
    throw illegalArguments(`form field '${name}' is not valid UTF-8 once percent-decoded`);
  }
  const form: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const existing = form[key];
    form[key] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return form;
}
