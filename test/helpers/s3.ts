/**
 * A real S3 protocol peer for the tests: s3rver on a free loopback port over a temporary folder, or —
 * when S3_ENDPOINT is set in the tests' environment (README "Tests against another S3") — that S3
 * (MinIO, AWS…) with the S3_* credentials. Either way each use gets buckets of its own, emptied and
 * removed by `stop` (with the scratch folders of processes killed on them).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client, type S3Settings } from '../../src/storage/s3-store.js';

/** What s3rver (CommonJS, no types) offers the tests. */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  store: { deleteObject(bucket: string, key: string): Promise<void>; getResourcePath(bucket: string, key: string, resource: string): string };
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

export interface TestS3 {
  settings: S3Settings;
  bucket: string;
  cacheBucket: string;
  /** the S3_* variables of a service using these buckets */
  env: Record<string, string>;
  client: S3Client;
  /** the keys in a bucket */
  keys(bucket: string): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * s3rver 3.7.1 removes a key's folder when its last key is deleted. Between another PUT's `mkdirp` of that
 * folder and the opening of its file, that removal makes the open fail, on a write stream with no error
 * listener: an uncaught ENOENT in the test process (seen when two service processes' storage probes under
 * `.tmp/` crossed). Real S3 has no folders; s3rver lists keys from files, so an empty folder left behind
 * changes no answer. Deleting therefore removes the key's files only.
 */
function keepKeyFolders(store: S3rverInstance['store']): void {
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        fs.rm(store.getResourcePath(bucket, key, resource), { force: true }),
      ),
    );
  };
}

export async function startTestS3(): Promise<TestS3> {
  let settings: S3Settings;
  let stopServer = async () => undefined as void;
  if (process.env.S3_ENDPOINT) {
    settings = {
      endpoint: process.env.S3_ENDPOINT,
      region: process.env.S3_REGION ?? 'us-east-1',
      accessKeyId: process.env.S3_ACCESS_KEY_ID,
      secretAccessKey: process.env.S3_SECRET_ACCESS_KEY,
      forcePathStyle: process.env.S3_FORCE_PATH_STYLE === 'true',
    };
  } else {
    const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-s3rver-'));
    const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, vhostBuckets: false });
    keepKeyFolders(server.store);
    const { port } = await server.run();
    settings = { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true };
    stopServer = async () => {
      await server.close();
      await fs.rm(directory, { recursive: true, force: true });
    };
  }
  const client = createS3Client(settings);
  const suffix = randomBytes(4).toString('hex');
  const bucket = `crs-test-content-${suffix}`;
  const cacheBucket = `crs-test-cache-${suffix}`;
  for (const name of [bucket, cacheBucket]) await client.send(new CreateBucketCommand({ Bucket: name }));
  const keys = async (name: string) => {
    const found: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: name, ContinuationToken: token }));
      for (const object of page.Contents ?? []) if (object.Key) found.push(object.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found.sort();
  };
  return {
    settings,
    bucket,
    cacheBucket,
    env: {
      S3_ENDPOINT: settings.endpoint!,
      S3_REGION: settings.region,
      S3_BUCKET: bucket,
      S3_CACHE_BUCKET: cacheBucket,
      S3_FORCE_PATH_STYLE: String(settings.forcePathStyle),
      ...(settings.accessKeyId && settings.secretAccessKey ? { S3_ACCESS_KEY_ID: settings.accessKeyId, S3_SECRET_ACCESS_KEY: settings.secretAccessKey } : {}),
    },
    client,
    keys,
    stop: async () => {
      for (const name of [bucket, cacheBucket]) {
        for (const key of await keys(name)) await client.send(new DeleteObjectCommand({ Bucket: name, Key: key }));
        await client.send(new DeleteBucketCommand({ Bucket: name }));
      }
      client.destroy();
      await stopServer();
      // the scratch folders of processes killed on these buckets (a test's SIGKILL): no later start of the
      // same buckets removes them (src/temp-folders.ts)
      const scratch = (await fs.readdir(os.tmpdir())).filter((name) => [bucket, cacheBucket].some((used) => name.startsWith(`crs-s3-${used}-`)));
      await Promise.all(scratch.map((name) => fs.rm(path.join(os.tmpdir(), name), { recursive: true, force: true })));
    },
  };
}
