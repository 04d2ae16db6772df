/**
 * Folders of this process in the OS temp folder (os.tmpdir(), TMPDIR): an S3 store's scratch folder, the
 * OCR models' links while a recognizer loads. Their owner removes them when it closes; whatever is left
 * goes when the process exits (process.exit: also a second signal's fast exit). A process killed
 * (SIGKILL, out of memory, a crash) cannot remove its own: each folder is named after its process
 * (`<prefix><pid namespace>-<pid>-XXXXXX`), and making a folder of the same kind first removes those
 * whose process is gone.
 */
import { readlinkSync, rmSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isProcessAlive } from './processes.js';

/** The folders this process made and did not remove yet. */
const ours = new Set<string>();

/**
 * This process's pid namespace (an inode number), undefined without /proc: a process id says whether a
 * process is alive only within its namespace (containers sharing a temp folder each count their own).
 */
const pidNamespace = (() => {
  try {
    return /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
  } catch {
    return undefined;
  }
})();

let removedAtExit = false;

/** A new folder of this process in the OS temp folder; `prefix` names its kind (`crs-ocr-models-`). */
export async function makeTempFolder(prefix: string): Promise<string> {
  await removeOrphanedTempFolders(prefix);
  const folder = await fsp.mkdtemp(path.join(os.tmpdir(), `${prefix}${pidNamespace ?? 'x'}-${process.pid}-`));
  ours.add(folder);
  if (!removedAtExit) {
    removedAtExit = true;
    process.on('exit', () => {
      for (const left of ours) {
        try {
          rmSync(left, { recursive: true, force: true });
        } catch {
          // a folder that cannot go now goes at a later start (its process is gone then)
        }
      }
    });
  }
  return folder;
}

/** Removes a folder of makeTempFolder with what is in it. */
export async function removeTempFolder(folder: string): Promise<void> {
  await fsp.rm(folder, { recursive: true, force: true });
  ours.delete(folder);
}

/**
 * Removes the folders of kind `prefix` whose process is gone: of this pid namespace (others' ids mean
 * nothing here; without /proc none is judged), and with an id no process has. A folder of a process
 * that reused a dead one's id stays until that process is gone too.
 */
async function removeOrphanedTempFolders(prefix: string): Promise<void> {
  if (pidNamespace === undefined) return;
  const kind = `${prefix}${pidNamespace}-`;
  const directory = os.tmpdir();
  const names = await fsp.readdir(directory).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const pid = name.startsWith(kind) ? /^(\d+)-[A-Za-z0-9]{6}$/.exec(name.slice(kind.length))?.[1] : undefined;
      if (pid === undefined || isProcessAlive(Number(pid))) return;
      // another process may be removing it at the same time
      await fsp.rm(path.join(directory, name), { recursive: true, force: true }).catch(() => undefined);
    }),
  );
}
