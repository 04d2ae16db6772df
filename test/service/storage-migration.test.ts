/**
 * `npm run storage:migrate -- --to s3|fs` (src/storage/migrate.ts, app/storage-migrate.ts): run as
 * the command it is, against a service on the file system and a real S3 peer. A run killed midway goes
 * on where it stopped; a process already on S3 reads what is not copied yet from the file system until
 * the switch is recorded; every copy is verified by its MD5; the way back works the same.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DeleteObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { convertBytes } from '../helpers/conversion.js';
import { newContent, sql } from '../helpers/entries.js';
import { textPdf } from '../helpers/pdf.js';
import { startSecondProcess, type ServiceProcess } from '../helpers/process.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { startTestService, type TestService } from '../helpers/service.js';

let s3: TestS3;
let service: TestService;
let onS3: ServiceProcess | undefined;
const contents: { id: string; path: string; md5: string; size: number }[] = [];

beforeAll(async () => {
  s3 = await startTestS3();
  service = await startTestService();
  for (let i = 0; i < 40; i++) {
    const bytes = randomBytes(256 * 1024 + i);
    const content = await newContent(service, { name: `file ${i}.bin`, bytes });
    contents.push({ id: content.id, path: content.resource.resourceSource.path, md5: content.resource.md5, size: bytes.length });
  }
  const { job } = await convertBytes(service, textPdf(2), 'pages.pdf');
  expect(job.state).toBe('Done');
}, 180_000);
afterAll(async () => {
  await onS3?.stop();
  await service?.stop();
  await s3?.stop();
});

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const objectMd5 = async (bucket: string, key: string) => md5(Buffer.concat(await ((await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body as NodeJS.ReadableStream & { toArray(): Promise<Buffer[]> }).toArray()));
const copiedCount = async () => Number((await sql<{ n: string }>(service, 'select count(*)::text as n from storage_migration_copy'))[0]!.n);
const representations = () => sql<{ id: string; storage_path: string }>(service, 'select id, storage_path from representation order by id');

/** The command, as an operator runs it, with the service's settings and the S3 ones. */
function migrate(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/app/storage-migrate.js'), ...args], {
    env: { ...process.env, DATABASE_URL: service.config.DATABASE_URL!, DATA_DIR: service.dataDir, LOG_LEVEL: 'warn', ...s3.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, exited, report: async () => JSON.parse((await exited).stdout.trim().split('\n').pop()!) };
}

/** Rows with bytes before the migration: the contents, the PDF and its two page images. */
const stored = () => contents.length + 1 + 2;

const downloadFrom = (base: string, id: string) => fetch(`${base}/api/v1/access.svc.content.default/v1/content/${id}/download?sessionId=${service.adminSession}`);

describe('storage:migrate --to s3', () => {
  it('refuses bad arguments and a configuration without S3 (exit 2)', async () => {
    const bad = await migrate(['--to', 'ftp']).exited;
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--to must be s3 or fs');
    // empty is unset, as docker-compose writes it
    const unset = await migrate(['--to', 's3'], { S3_ENDPOINT: '', S3_BUCKET: '', S3_CACHE_BUCKET: '', S3_ACCESS_KEY_ID: '', S3_SECRET_ACCESS_KEY: '' }).exited;
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('storage:migrate needs the S3 settings');
  });

  it('killed midway, a second run goes on where the first stopped; a process on S3 reads what is not copied yet from the file system', async () => {
    const first = migrate(['--to', 's3']);
    // killed once some copies were recorded
    while ((await copiedCount()) < 3) {
      if (first.child.exitCode !== null) throw new Error(`the migration ended before it was killed: ${JSON.stringify(await first.exited)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const copiedBefore = await copiedCount();
    expect(copiedBefore).toBeLessThan(stored());
    expect(await sql(service, 'select target, switched_at from storage_migration')).toEqual([{ target: 's3', switched_at: null }]);

    // a process on S3 meanwhile: what is not in the bucket yet is read from the file system
    onS3 = await startSecondProcess(service, { ...s3.env, CONTENT_STORAGE_PATH: service.config.contentStoragePath, CACHE_STORAGE_PATH: service.config.cacheStoragePath });
    const keys = new Set(await s3.keys(s3.bucket));
    const notCopied = contents.find((content) => !keys.has(content.path))!;
    expect(notCopied).toBeDefined();
    const fallback = await downloadFrom(onS3.baseUrl, notCopied.id);
    expect(fallback.status).toBe(200);
    expect(md5(Buffer.from(await fallback.arrayBuffer()))).toBe(notCopied.md5);
    // and what it uploads goes to S3 only
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('uploaded on S3')]), 'on-s3.txt');
    const uploaded = await (await fetch(`${onS3.baseUrl}/api/v1/access.svc.content.default/v1/content?sessionId=${service.adminSession}`, { method: 'POST', body: form })).json() as { id: string; resource: { resourceSource: { path: string } } };
    expect(await s3.keys(s3.bucket)).toContain(uploaded.resource.resourceSource.path);
    await expect(fs.access(path.join(service.config.contentStoragePath, uploaded.resource.resourceSource.path))).rejects.toMatchObject({ code: 'ENOENT' });

    const second = migrate(['--to', 's3', '--switch']);
    const report = await second.report();
    expect((await second.exited).code).toBe(0);
    // only what the first run had not recorded is copied again
    expect(report).toMatchObject({ switched: true, missing: [], alreadyThere: 1 });
    expect(report.resources + report.representations).toBe(stored() - copiedBefore);
    expect(await copiedCount()).toBe(stored() + 1);

    // every byte in its bucket, verified by its MD5
    const contentKeys = await s3.keys(s3.bucket);
    for (const content of contents) {
      expect(contentKeys).toContain(content.path);
      expect(await objectMd5(s3.bucket, content.path)).toBe(content.md5);
    }
    const cacheKeys = await s3.keys(s3.cacheBucket);
    for (const page of await representations()) expect(cacheKeys).toContain(page.storage_path);
    expect(await sql(service, 'select target, switched_at is not null as switched from storage_migration')).toEqual([{ target: 's3', switched: true }]);
  }, 180_000);

  it('after the switch a process on S3 reads nothing from the file system', async () => {
    const [kept, lost] = contents;
    // the file system copy of one goes: still served from the bucket
    await fs.rm(path.join(service.config.contentStoragePath, kept!.path));
    expect((await downloadFrom(onS3!.baseUrl, kept!.id)).status).toBe(200);
    // the bucket copy of another goes: not read back from the file system any more
    await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: lost!.path }));
    expect((await downloadFrom(onS3!.baseUrl, lost!.id)).status).toBe(503);
  });

  it('the way back (--to fs) copies from the bucket, and names the files in neither store instead of switching', async () => {
    // one content's bytes are lost from both stores
    const gone = contents[2]!;
    await fs.rm(path.join(service.config.contentStoragePath, gone.path));
    await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: gone.path }));
    const back = migrate(['--to', 'fs', '--switch']);
    const report = await back.report();
    expect((await back.exited).code).toBe(1);
    expect(report).toMatchObject({ switched: false, missing: [expect.stringContaining(gone.path)] });
    expect((await back.exited).stderr).toContain('in neither store');
    // the one removed from the file system above is back, with its bytes
    const restored = await fs.readFile(path.join(service.config.contentStoragePath, contents[0]!.path));
    expect(md5(restored)).toBe(contents[0]!.md5);
    expect(await sql(service, 'select target, switched_at from storage_migration')).toEqual([{ target: 'fs', switched_at: null }]);
  }, 120_000);
});
