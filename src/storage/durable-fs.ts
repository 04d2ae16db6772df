/**
 * The durable file-system sequences of the file store, as blocking calls: each runs whole in one
 * durable-io worker thread (durable-io.ts), so a small upload costs the main thread two messages
 * instead of about ten round trips through the libuv pool (each waiting for a turn of a busy
 * event loop: ~26 ms per 4 KiB upload under load, 9 of it placing the file).
 */
import * as fs from 'node:fs';
import path from 'node:path';

/**
 * Writes `data` to a new file (EEXIST if it exists; its directory is made if missing), fsyncs and
 * closes it. The bytes are not in the caller's hands any more, hence the mkdir here and not there.
 */
export function writeNewFileSync(file: string, data: Uint8Array): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fd = fs.openSync(file, 'wx');
  }
  try {
    for (let offset = 0; offset < data.length; ) {
      const written = fs.writeSync(fd, data, offset);
      if (written === 0) throw new Error(`Short write: no progress writing ${file}`);
      offset += written;
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
