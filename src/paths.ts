import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The folder holding package.json, whether running from src/ or compiled dist/src/. */
function findProjectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot();

/**
 * How files of the project show in a stack trace (ES modules as URLs, others as paths) and what they
 * become, longest first: its root, and its node_modules where they really are (a symbolic link resolved).
 */
const installPrefixes = (() => {
  const modules = path.join(projectRoot, 'node_modules');
  const folders: [string, string][] = [
    [projectRoot, ''],
    [realpathSync(projectRoot), ''],
    ...(existsSync(modules) ? [[realpathSync(modules), 'node_modules/'] as [string, string]] : []),
  ];
  return folders.flatMap(([folder, shown]): [string, string][] => [
    [`${pathToFileURL(folder).href}/`, shown],
    [`${folder}${path.sep}`, shown],
  ]).sort(([a], [b]) => b.length - a.length);
})();

/** `text` (a stack trace, a message) with the project's files named relative to its root, not where it is installed. */
export const withProjectPaths = (text: string): string =>
  installPrefixes.reduce((result, [prefix, shown]) => result.split(prefix).join(shown), text);
