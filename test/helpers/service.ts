import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createOrm } from '../../src/db/orm.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { startWholeService } from '../../app/service.js';
import type { RunningService, ServiceParts } from '../../src/service.js';
import { checkAnswer } from './openapi.js';

export const adminPassword = 'admin-password-for-tests';

/** A fresh database copied from the migrated template (fast, isolated per test file). */
export async function createTestDatabase(): Promise<string> {
  const maintenanceUrl = inject('postgresUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const orm = await createOrm(maintenanceUrl, createLogger('warn'), { poolMax: 1 });
  await orm.em.getConnection().execute(`create database ${name} template ${inject('templateDatabase')}`);
  await orm.close(true);
  return maintenanceUrl.replace(/\/[^/]+$/, `/${name}`);
}

export interface TestService extends RunningService {
  config: Config;
  dataDir: string;
  /** a session id of the administrator */
  adminSession: string;
  /** `{base_url}/api/v1/access.svc.content.default/v1` */
  contentBase: string;
  adminBase: string;
  /** an authenticated session for a new user with the USER role */
  createUserSession(userName: string, roles?: string[]): Promise<string>;
  login(user: string, password: string): Promise<string>;
  graphql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, session?: string): Promise<{ status: number; data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }>;
}

/**
 * The real service (all roles in one process) on a free port, over its own database and data folder;
 * `logger` lets a test read what the service logs, `moreRouters` serve more paths beside the service's.
 */
export async function startTestService(
  env: Record<string, string> = {},
  options: { authenticate?: boolean; logger?: Logger; moreRouters?: ServiceParts['gatewayRouters'] } = {},
): Promise<TestService> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-test-data-'));
  const config = loadConfig({
    DATABASE_URL: await createTestDatabase(),
    DATA_DIR: dataDir,
    PORT: '0',
    ADMIN_PASSWORD: adminPassword,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // OCR costs seconds of CPU per image: the many images other tests upload would load the suite's
    // two cores for nothing. Its tests (src/modules/fulltext/ocr.test.ts) turn it on.
    OCR_ENABLED: 'false',
    // likewise a preview renders each PDF or image uploaded: the tests of previews turn them on
    // (src/modules/conversion/thumbnails.test.ts)
    PREVIEWS_ENABLED: 'false',
    ...env,
  });
  const running = await startWholeService(config, options.logger ?? createLogger(config.LOG_LEVEL), options.moreRouters);
  const base = running.baseUrl;

  const login = async (user: string, password: string) => {
    const response = await fetch(`${base}/api/v1/authenticate?user=${encodeURIComponent(user)}&password=${encodeURIComponent(password)}`, { method: 'POST' });
    if (response.status !== 200) throw new Error(`login of ${user} failed: ${response.status} ${await response.text()}`);
    return (await response.json()) as string;
  };
  // a subgraph-only process (ROLE=content…) has no REST layer to log in through
  const adminSession = options.authenticate === false ? '' : await login(config.ADMIN_USER, adminPassword);

  const graphql: TestService['graphql'] = async (query, variables, session = adminSession) => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...(session ? { authorization: `Bearer ${session}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, ...((await response.json()) as object) };
  };

  const createUserSession = async (userName: string, roles: string[] = ['USER']) => {
    const password = `${userName}-password`;
    const created = await graphql(
      'mutation($u: String!, $p: String!, $r: [String!]) { createUser(userName: $u, password: $p, roles: $r) { userName } }',
      { u: userName, p: password, r: roles },
    );
    if (created.errors) throw new Error(`createUser failed: ${JSON.stringify(created.errors)}`);
    return login(userName, password);
  };

  return {
    ...running,
    config,
    dataDir,
    adminSession,
    contentBase: `${base}/api/v1/access.svc.content.${config.DEFAULT_REPOSITORY}/v1`,
    adminBase: `${base}/api/v1/access.svc.admin/v1`,
    login,
    graphql,
    createUserSession,
    stop: async () => {
      await running.stop();
      // retried: a background job of the stopped service (text extraction) may still be closing a
      // file under the data folder (seen once as ENOTEMPTY; cause not pinned down)
      await fs.rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** `A/<path>` of `service` with query parameters and a session: the administrator's unless given (null: none). */
export function adminUrl(service: TestService, path: string, query: Record<string, string> = {}, session: string | null = service.adminSession): string {
  const params = new URLSearchParams(query);
  if (session !== null) params.set('sessionId', session);
  return `${service.adminBase}${path}?${params}`;
}

/**
 * JSON of a fetch answer together with its status, for one-line assertions. A REST answer is checked
 * against the service's OpenAPI document first (helpers/openapi.ts): an undeclared status or a body
 * its schema refuses fails the test.
 */
export async function call(url: string, init: RequestInit = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  await checkAnswer(init.method ?? 'GET', url, { status: response.status, body, contentType: response.headers.get('content-type') });
  return { status: response.status, body, headers: response.headers };
}

export const json = (method: string, body: unknown): RequestInit => ({
  method,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * The first `count` events of a subscription over graphql-ws (the session in connection_init), or
 * what ended it early; gives up after `timeoutMs` so a broken server fails the test instead of hanging it.
 */
export async function subscriptionEvents<T>(
  service: Pick<TestService, 'baseUrl' | 'adminSession'>,
  query: string,
  count: number,
  { session = service.adminSession, timeoutMs = 10_000 }: { session?: string; timeoutMs?: number } = {},
): Promise<{ events: { data?: T; errors?: readonly unknown[] }[]; error?: unknown }> {
  const subscription = await openSubscription<T>(service, query, { session });
  try {
    await subscription.until(count, timeoutMs);
    return { events: subscription.events, ...subscription.outcome() };
  } finally {
    await subscription.close();
  }
}

/** A subscription left open: what it received so far, a wait for more, how it ended. */
export interface OpenSubscription<T> {
  events: { data?: T; errors?: readonly unknown[] }[];
  /** resolves when `count` events arrived or the subscription ended, rejects after `timeoutMs` */
  until(count: number, timeoutMs?: number): Promise<void>;
  /** resolves when the server ended it (with the close event or error) */
  ended: Promise<{ error?: unknown }>;
  /** how it ended ({} while it goes on or when it completed) */
  outcome(): { error?: unknown };
  close(): Promise<void>;
}

/** A subscription over graphql-ws (the session in connection_init) that the test reads as it goes. */
export async function openSubscription<T>(
  service: Pick<TestService, 'baseUrl' | 'adminSession'>,
  query: string,
  { session = service.adminSession, variables }: { session?: string; variables?: Record<string, unknown> } = {},
): Promise<OpenSubscription<T>> {
  const { createClient } = await import('graphql-ws');
  const { default: WebSocket } = await import('ws');
  const client = createClient({
    url: `${service.baseUrl.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${session}` },
    retryAttempts: 0,
  });
  const events: OpenSubscription<T>['events'] = [];
  const waiters = new Set<() => void>();
  const wakeAll = () => [...waiters].forEach((wake) => wake());
  let endedWith: { error?: unknown } | undefined;
  const ended = new Promise<{ error?: unknown }>((resolve) => {
    const end = (outcome: { error?: unknown }) => {
      endedWith = outcome;
      resolve(outcome);
      wakeAll();
    };
    client.subscribe<T>({ query, variables }, {
      next: (event) => {
        events.push(event as { data?: T; errors?: readonly unknown[] });
        wakeAll();
      },
      error: (error) => end({ error }),
      complete: () => end({}),
    });
  });
  const until = (count: number, timeoutMs = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (events.length < count && !endedWith) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${count} events within ${timeoutMs} ms (got ${events.length}: ${JSON.stringify(events)})`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { events, until, ended, outcome: () => endedWith ?? {}, close: () => client.dispose() as Promise<void> };
}
