import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import type { S3Settings } from './storage/s3-store.js';

const role = z.enum(['all', 'gateway', 'content', 'admin', 'health', 'worker']);
const optionalUrl = z.string().url().optional();
const positiveInt = z.coerce.number().int().positive();
const requirePackage = createRequire(import.meta.url);
/** Whether the tesseract model of `language` is installed (OCR_LANGUAGES: nothing is downloaded at run time). */
const ocrModelInstalled = (language: string) => {
  try {
    requirePackage.resolve(`@tesseract.js-data/${language}/package.json`);
    return true;
  } catch {
    return false;
  }
};

/** true unless set to false */
const flag = z.enum(['true', 'false']).default('true').transform((value) => value === 'true');
/** an S3 bucket name (lowercase letters, digits, dots and hyphens, 3 to 63 characters) */
const bucketName = z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens');

/** The environment's schema (DESIGN §2). Every variable is optional; defaults give the embedded mode. */
const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  BASE_PATH: z
    .string()
    .default('')
    .refine((v) => v === '' || (/^\/[A-Za-z0-9._~\-/]*$/.test(v) && !v.endsWith('/')), 'must be empty or start with / and not end with /'),
  DATA_DIR: z.string().min(1).default('.data'),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  MEILISEARCH_URL: optionalUrl,
  MEILISEARCH_API_KEY: z.string().optional(),
  MONGODB_URL: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL').optional(),
  CONTENT_STORAGE_PATH: z.string().min(1).optional(),
  CACHE_STORAGE_PATH: z.string().min(1).optional(),
  /** S3-compatible object storage of content and cache bytes (DESIGN §14): S3_BUCKET and S3_CACHE_BUCKET select it */
  S3_ENDPOINT: optionalUrl,
  S3_BUCKET: bucketName.optional(),
  S3_CACHE_BUCKET: bucketName.optional(),
  S3_REGION: z.string().regex(/^[a-z0-9-]{1,64}$/, 'an AWS region name such as us-east-1').default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
  /** which store holds the bytes: s3 when S3_BUCKET is set, else fs; fs with S3_* set reads back from S3 during a migration to fs (docs/deployment.md) */
  STORAGE_BACKEND: z.enum(['fs', 's3']).optional(),
  ADMIN_USER: z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, 'letters, digits and . _ @ - only').default('admin'),
  ADMIN_PASSWORD: z.string().min(8, 'at least 8 characters').optional(),
  DEFAULT_REPOSITORY: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only').default('default'),
  SESSION_IDLE_MINUTES: positiveInt.default(30),
  SESSION_MAX_HOURS: positiveInt.default(12),
  /** how long the audit trail keeps an event (DESIGN §11); the retention job removes older ones hourly */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
  MAX_UPLOAD_BYTES: positiveInt.default(5 * 1024 ** 3),
  SEARCH_TIMEOUT_MS: positiveInt.default(10_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ROLE: role.default('all'),
  SUBGRAPH_CONTENT_URL: optionalUrl,
  SUBGRAPH_ADMIN_URL: optionalUrl,
  SUBGRAPH_HEALTH_URL: optionalUrl,
  CORS_ORIGINS: z
    .string()
    .transform((value) => value.split(',').map((origin) => origin.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, 'each origin must be scheme://host[:port], without a path')))
    .default([]),
  GRAPHQL_INTROSPECTION: flag,
  /** the gateway's custom paths (docs/benchmarks.md has what each gains): off switches */
  GATEWAY_HTTP_FAST_PATH: flag,
  GATEWAY_SINGLE_SUBGRAPH_SHORTCUT: flag,
  GRAPHQL_MAX_RESULT_ITEMS: positiveInt.default(50_000),
  /** how often open subscription connections have their session verified again (idle and absolute expiry) */
  SUBSCRIPTION_SESSION_CHECK_SECONDS: positiveInt.default(30),
  /** what one session, and one client address, may hold open on the gateway (docs/security.md): graphql-ws sockets, and operations under way across them and SSE */
  SUBSCRIPTION_MAX_SOCKETS_PER_SESSION: positiveInt.default(10),
  SUBSCRIPTION_MAX_SOCKETS_PER_ADDRESS: positiveInt.default(100),
  SUBSCRIPTION_MAX_OPERATIONS_PER_SESSION: positiveInt.default(100),
  SUBSCRIPTION_MAX_OPERATIONS_PER_ADDRESS: positiveInt.default(500),
  /** the shortest interval a subscription may ask for (healthChanges' intervalMs) */
  SUBSCRIPTION_MIN_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  CONV_MAX_INPUT_FILE_SIZE: positiveInt.default(524288000),
  CONV_MAX_TOTAL_INPUT_FILE_SIZE: positiveInt.default(2147483648),
  CONV_MAX_NUMBER_OF_INPUT_FILES: positiveInt.default(100),
  CONV_MAX_PDF_TO_IMAGE_THRESHOLD: positiveInt.default(1000000),
  CONV_MAX_PDF_TO_IMAGE_TOTAL_THRESHOLD: positiveInt.default(10000000),
  CONV_MAX_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES: positiveInt.default(10000),
  /** this process's name among the workers (Agenda's lastModifiedBy, the job record's worker) */
  WORKER_NAME: z.string().regex(/^[A-Za-z0-9._@:-]{1,64}$/, 'letters, digits and . _ @ : - only').optional(),
  /** jobs one worker process runs at once; 0: this process runs none (with ROLE=all, when separate workers do) */
  JOB_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(2),
  /** a job whose worker stopped touching it for this long is taken over by another worker */
  JOB_LOCK_LIFETIME_MS: z.coerce.number().int().min(1000).default(60_000),
  /** how often a worker looks for due jobs besides the LISTEN/NOTIFY wake-ups (and for expired locks) */
  JOB_POLL_MS: z.coerce.number().int().min(100).default(1_000),
  /** queued (pending) jobs one user may have; a conversion asked for beyond them is a 429 with Retry-After */
  JOB_MAX_PENDING_PER_USER: z.coerce.number().int().min(1).max(100_000).default(100),
  /** a statement in a job's transactions (and the one storing extracted texts) running longer is cancelled by Postgres and fails the job (statementTimeout) */
  JOB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** the memory bound of one render process (V8 heap and, through its resident size, native memory) */
  CONV_RENDER_MEMORY_MB: z.coerce.number().int().min(64).default(1024),
  /** the deadline of one conversion's rendering */
  CONV_RENDER_TIMEOUT_MS: z.coerce.number().int().min(1000).default(300_000),
  /** the largest image (input or rendered page) in pixels */
  CONV_MAX_IMAGE_PIXELS: positiveInt.default(100_000_000),
  /** a rendered page waits at most this long to be stored with the pages after it (one commit and one progress notification for several pages); 0: each page as it comes */
  CONV_PAGE_COMMIT_MS: z.coerce.number().int().min(0).max(10_000).default(250),
  /** resolution of rendered PDF pages */
  CONV_PDF_DPI: z.coerce.number().int().min(18).max(600).default(150),
  /** full text: a larger resource is not read for its text (its name is still indexed) */
  FULLTEXT_MAX_INPUT_BYTES: positiveInt.default(104_857_600),
  /** full text: characters of extracted text kept per resource (the rest is dropped; a tsvector holds at most 1 MB) */
  FULLTEXT_MAX_TEXT_CHARS: z.coerce.number().int().min(1).max(500_000).default(200_000),
  /** full text: memory bound and deadline of one extraction process (PDF, DOCX) */
  FULLTEXT_EXTRACT_MEMORY_MB: z.coerce.number().int().min(64).default(1024),
  FULLTEXT_EXTRACT_TIMEOUT_MS: z.coerce.number().int().min(500).default(60_000),
  /** previews (DESIGN §12): a first-page thumbnail of every new PDF or image version, made in the background */
  PREVIEWS_ENABLED: flag,
  /** OCR (DESIGN §12): the text of images and of PDF pages without a text layer, read by tesseract.js in the extraction process */
  OCR_ENABLED: flag,
  /** languages OCR reads, joined by '+' (eng+deu): each needs its model package @tesseract.js-data/<language> installed (nothing is downloaded) */
  OCR_LANGUAGES: z
    .string()
    .default('eng')
    .transform((value) => value.split('+').map((language) => language.trim()))
    .refine((languages) => languages.every((language) => /^[a-z_]{3,12}$/.test(language) && ocrModelInstalled(language)), {
      message: 'each language needs its model package @tesseract.js-data/<language> installed (eng is)',
    }),
  /** OCR of one page or image: over this time it is skipped (and said so in the resource's extraction notes) */
  OCR_PAGE_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** resolution at which a PDF page without text is drawn for OCR */
  OCR_DPI: z.coerce.number().int().min(72).max(600).default(200),
  /** the deep check: the whole run (scenarios and waits), and each wait for a conversion or text extraction within it */
  DEEP_CHECK_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(60_000),
  DEEP_CHECK_WAIT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** full text: how often a worker looks for queued texts whose extraction job was never submitted (the process that queued them died first) */
  FULLTEXT_SWEEP_MS: z.coerce.number().int().min(100).default(30_000),
  /** how often a worker queues a job for kinds whose records waited pending this long with none taking them (their submitter died first) */
  JOB_SWEEP_MS: z.coerce.number().int().min(100).default(60_000),
  /** a stop's time for requests in flight to finish; those still unanswered then get a 503 (src/http/unanswered.ts) */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  /** webhooks may be delivered to loopback, link-local, private and multicast addresses (docs/events.md "Address rules"): for receivers on the same host or network only */
  WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
  /** a webhook delivery is a 2xx answer within this time */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** a failing delivery is retried this long after its first failure, then its webhook is marked failing */
  WEBHOOK_RETRY_FOR_MS: z.coerce.number().int().min(100).default(86_400_000),
  /** the first retry's delay; each next one doubles it (with jitter) up to WEBHOOK_RETRY_MAX_MS */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).default(10_000),
  WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(10).default(3_600_000),
  /** how often a worker looks for deliveries due */
  WEBHOOK_POLL_MS: z.coerce.number().int().min(50).default(1_000),
  /** deliveries one worker process makes at once */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(8),
});

/** The settings-file names of the spec are accepted as aliases of the property names (DESIGN §0). */
const aliases: Record<string, string> = {
  CONV_PDF_TO_IMAGE_MAX_NUMBER_OF_OBJECTS_PER_PAGE: 'CONV_MAX_PDF_TO_IMAGE_THRESHOLD',
  CONV_PDF_TO_IMAGE_MAX_NUMBER_OF_OBJECTS: 'CONV_MAX_PDF_TO_IMAGE_TOTAL_THRESHOLD',
  CONV_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES: 'CONV_MAX_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES',
};

export type Environment = z.infer<typeof environmentSchema>;

export interface Config extends Environment {
  dataDir: string;
  contentStoragePath: string;
  cacheStoragePath: string;
  /** which store holds the bytes */
  storageBackend: 'fs' | 's3';
  /** the S3 settings, when S3_BUCKET is set */
  s3?: S3Config;
}

export interface S3Config extends S3Settings {
  bucket: string;
  cacheBucket: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string | undefined> = {};
  for (const [alias, name] of Object.entries(aliases)) if (env[alias] !== undefined) input[name] = env[alias];
  for (const key of Object.keys(environmentSchema.shape)) {
    // an empty value means "not set", as docker-compose writes unset variables
    if (env[key] !== undefined && env[key] !== '') input[key] = env[key];
  }
  const parsed = environmentSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const dataDir = path.resolve(parsed.data.DATA_DIR);
  const s3 = s3Config(parsed.data);
  return {
    ...parsed.data,
    dataDir,
    storageBackend: parsed.data.STORAGE_BACKEND ?? (s3 ? 's3' : 'fs'),
    s3,
    contentStoragePath: path.resolve(parsed.data.CONTENT_STORAGE_PATH ?? path.join(dataDir, 'storage')),
    cacheStoragePath: path.resolve(parsed.data.CACHE_STORAGE_PATH ?? path.join(dataDir, 'cache')),
  };
}

/** The S3 settings, checked together: a half-given S3 configuration is a startup error, not a file system fallback. */
function s3Config(env: Environment): S3Config | undefined {
  const given = (Object.keys(env) as (keyof Environment)[]).filter((key) => key.startsWith('S3_') && key !== 'S3_REGION' && key !== 'S3_FORCE_PATH_STYLE');
  const problems: string[] = [];
  if (env.STORAGE_BACKEND === 's3' && !env.S3_BUCKET) problems.push('STORAGE_BACKEND: s3 needs S3_BUCKET and S3_CACHE_BUCKET');
  if (given.length > 0 && !env.S3_BUCKET) problems.push(`S3_BUCKET: required with ${given.join(', ')}`);
  if (env.S3_BUCKET && !env.S3_CACHE_BUCKET) problems.push('S3_CACHE_BUCKET: required with S3_BUCKET (page images and thumbnails have a bucket of their own)');
  if (env.S3_BUCKET && env.S3_BUCKET === env.S3_CACHE_BUCKET) problems.push('S3_CACHE_BUCKET: must differ from S3_BUCKET');
  if (Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) problems.push('S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: both or neither (then the AWS default credential chain)');
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
  if (!env.S3_BUCKET || !env.S3_CACHE_BUCKET) return undefined;
  return {
    bucket: env.S3_BUCKET,
    cacheBucket: env.S3_CACHE_BUCKET,
    endpoint: env.S3_ENDPOINT,
    region: env.S3_REGION,
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
    forcePathStyle: env.S3_FORCE_PATH_STYLE,
  };
}
