import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { call, json, type TestService } from './service.js';

type Query = Record<string, string | number | boolean | string[] | undefined>;

/** `C<path>?sessionId=…&…` (repeated parameters for arrays), as a REST client writes it. */
export function contentUrl(service: TestService, path: string, query: Query = {}, session = service.adminSession, base = service.contentBase): string {
  const params = new URLSearchParams({ sessionId: session });
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  return `${base}${path}?${params}`;
}

export interface UploadOptions {
  name?: string;
  parentId?: string;
  mimeType?: string;
  typeName?: string;
  tags?: string[];
  properties?: Record<string, unknown> | string;
  /** the bytes; default: a small text */
  bytes?: Uint8Array | string;
  fileName?: string;
  /** false: no file part at all */
  file?: boolean;
  session?: string;
  base?: string;
}

/** A multipart body: the fields first, then the part `file` with `bytes` named `fileName`. */
export function fileForm(bytes: string | Uint8Array, fileName: string, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  form.append('file', new Blob([typeof bytes === 'string' ? Buffer.from(bytes) : new Uint8Array(bytes)]), fileName);
  return form;
}

/** A REST call (as the administrator) that must succeed, below 300; its body. An object body goes as JSON, a form as multipart. */
export async function succeeded(service: TestService, method: string, path: string, body?: FormData | Record<string, unknown>, query: Query = {}): Promise<any> {
  const init = body instanceof FormData || body === undefined ? { method, body } : json(method, body);
  const answer = await call(contentUrl(service, path, query), init);
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
  return answer.body;
}

/**
 * The verbs on a content that change which entries are visible by default, in turn, with `check(step)`
 * after each: what the trigger-kept tables (entry_visible_count, _tag, _words) must follow. Check-out,
 * check-in (with `checkInFile`: new bytes), a copy then the original deactivated, its restoration.
 */
export async function changeVisibility(service: TestService, contentId: string, check: (step: string) => Promise<void>, checkInFile?: FormData): Promise<void> {
  const workingCopy = await succeeded(service, 'POST', `/content/${contentId}/check-out`);
  await check('check-out (a working copy is not visible)');
  await succeeded(service, 'POST', `/content/${workingCopy.id}/check-in`, checkInFile);
  await check('check-in (the new version replaces the old as latest)');
  await succeeded(service, 'POST', `/content/${contentId}/copy`, { name: 'copied.txt' });
  await succeeded(service, 'DELETE', `/content/${contentId}`);
  await check('copy, then deactivate');
  await succeeded(service, 'POST', `/content/${contentId}/restore`);
  await check('restore');
}

/** The entries a search shows by default (DESIGN §5), as the trigger-kept tables hold them. */
export const defaultVisibility = `is_latest and active and version_status is distinct from 'WORKING_COPY'`;

/** POST C/content (multipart): the fields first, then the part `file`. */
export async function uploadContent(service: TestService, options: UploadOptions = {}) {
  const form = new FormData();
  if (options.name !== undefined) form.append('name', options.name);
  if (options.parentId !== undefined) form.append('parentId', options.parentId);
  if (options.mimeType !== undefined) form.append('mimeType', options.mimeType);
  if (options.typeName !== undefined) form.append('typeName', options.typeName);
  for (const tag of options.tags ?? []) form.append('tags', tag);
  if (options.properties !== undefined) {
    form.append('properties', typeof options.properties === 'string' ? options.properties : JSON.stringify(options.properties));
  }
  if (options.file !== false) {
    const bytes = options.bytes ?? `bytes of ${options.name ?? 'a file'}`;
    form.append('file', new Blob([typeof bytes === 'string' ? Buffer.from(bytes) : new Uint8Array(bytes)]), options.fileName ?? options.name ?? 'file.bin');
  }
  return call(contentUrl(service, '/content', {}, options.session, options.base), { method: 'POST', body: form });
}

/** An uploaded content's REST body (asserts the 201). */
export async function newContent(service: TestService, options: UploadOptions = {}): Promise<Record<string, any>> {
  const { status, body } = await uploadContent(service, options);
  if (status !== 201) throw new Error(`upload failed: ${status} ${JSON.stringify(body)}`);
  return body;
}

/** POST C/folder; the REST body (asserts the 201). */
export async function newFolder(service: TestService, name: string, parentId?: string, session?: string, base?: string): Promise<Record<string, any>> {
  const { status, body } = await call(contentUrl(service, '/folder', {}, session, base), json('POST', parentId ? { name, parentId } : { name }));
  if (status !== 201) throw new Error(`folder creation failed: ${status} ${JSON.stringify(body)}`);
  return body;
}

/** The files under a store, relative to it, sorted. */
async function filesUnder(root: string): Promise<string[]> {
  const fs = await import('node:fs/promises');
  const path = await import('node:path');
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** The files under the content store, relative to it (the temp area included), sorted. */
export const storedFiles = (service: TestService) => filesUnder(service.config.contentStoragePath);

/** The page images in the cache store, relative to it (its temporary area aside), sorted. */
export const cachedFiles = async (service: TestService) => (await filesUnder(service.config.cacheStoragePath)).filter((file) => !file.startsWith('.tmp'));

/** A date as the spec's REST layer writes it: yyyy-MM-ddTHH:mm:ss.SSS+0000 (UTC). */
export const restDatePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;

export const sql = <T = Record<string, unknown>>(service: TestService, query: string, params: unknown[] = []) =>
  service.services.orm.em.getConnection().execute<T[]>(query, params);

/** Waits until the extraction job of a content's latest resource is done (60 s at most). */
export async function extracted(service: TestService, contentId: string): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const [job] = await sql<{ state: string }>(service, `select state from service_job where job_name = 'extractText' and ? = any(content_ids) order by created_at desc limit 1`, [contentId]);
    if (job?.state === 'Done') return;
    if (job?.state === 'panic' || Date.now() > until) throw new Error(`extraction of ${contentId}: ${job?.state}`);
    await sleep(100);
  }
}
