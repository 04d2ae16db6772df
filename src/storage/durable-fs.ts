/**
 * The durable file-system sequences of the file store, as blocking calls: each runs whole in one
 * durable-io worker thread (durable-io.ts), so a small upload costs the main thread two messages
 * instead of about ten round trips through the libuv pool (each waiting for a turn of a busy
 * event loop: ~26 ms per 4 KiB upload under load, 9 of it placing the file).
 */
import * as fs from 'node:fs';
import path from 'node:path';

/** Writes `parts` to a new file (EEXIST if it exists, ENOENT if its directory is missing), fsyncs and closes it. */
export function writeNewFileSync(file: string, parts: readonly Uint8Array[]): void {
  const fd = fs.openSync(file, 'wx');
  try {
    let pending = parts.filter((part) => part.length > 0);
    while (pending.length > 0) {
      let written = fs.writevSync(fd, pending);
      if (written === 0) throw new Error(`Short write: no progress writing ${file}`);
      const rest: Uint8Array[] = [];
      for (const part of pending) {
        if (written >= part.length) written -= part.length;
        else {
          rest.push(written > 0 ? part.subarray(written) : part);
          written = 0;
        }
      }
      pending = rest;
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Renames a synced file to `target` and makes the change durable: fsync of the target's directory,
 * and of each parent whose entries changed when directories had to be made. `parentKnown`: the
 * directory existed a moment ago, so the mkdir is tried only if the rename says it is missing.
 */
export function placeFileSync(tempPath: string, target: string, parentKnown: boolean): void {
  const parent = path.dirname(target);
  let firstCreated: string | undefined;
  if (parentKnown) {
    try {
      fs.renameSync(tempPath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      firstCreated = fs.mkdirSync(parent, { recursive: true });
      fs.renameSync(tempPath, target);
    }
  } else {
    firstCreated = fs.mkdirSync(parent, { recursive: true });
    fs.renameSync(tempPath, target);
  }
  fsyncDirectorySync(parent);
  if (firstCreated) {
    // new directories: their entries in their parents must be durable too
    const stop = path.dirname(firstCreated);
    for (let dir = path.dirname(parent); ; dir = path.dirname(dir)) {
      fsyncDirectorySync(dir);
      if (dir === stop || dir === path.dirname(dir)) break;
    }
  }
}

/** fsync of a directory (makes renames / new entries durable). Skipped where unsupported. */
function fsyncDirectorySync(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch (error) {
    if (isUnsupportedDirectorySync(error)) return; // e.g. Windows cannot open a directory
    throw error;
  }
  try {
    fs.fsyncSync(fd);
  } catch (error) {
    if (!isUnsupportedDirectorySync(error)) throw error; // some network file systems: EINVAL
  } finally {
    fs.closeSync(fd);
  }
}

function isUnsupportedDirectorySync(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EISDIR' || code === 'EPERM' || code === 'EINVAL' || code === 'ENOTSUP' || code === 'EBADF';
}
