import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The deployment files: docker-compose.yml (DESIGN §1: "it must pass `docker compose config`"),
 * the Dockerfile and .dockerignore. Runs from test/ or from its compiled copy in dist/test/, so
 * the repository root is found from this file's location: the nearest folder with a package.json
 * (dist/ has none).
 */
function findRepoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

const root = findRepoRoot();
const composeFile = path.join(root, 'docker-compose.yml');
const compose = readFileSync(composeFile, 'utf8');

/** `docker compose` (the v2 CLI plugin) is present: its `config` needs no running engine. */
const hasCompose = (() => {
  const r = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0;
})();

/** The top-level blocks of a YAML file: key → the lines below it (indented), by line scanning. */
function topLevelBlocks(text: string): Map<string, string[]> {
  const blocks = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split(/\r?\n/)) {
    const top = /^([A-Za-z0-9_.-]+):/.exec(line);
    if (top) {
      current = [];
      blocks.set(top[1]!, current);
    } else if (current && (line.trim() === '' || /^\s/.test(line))) {
      current.push(line);
    }
  }
  return blocks;
}

/** The entries of a block at its first indentation level: key → the text of its sub-block. */
function entries(lines: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const indent = lines.find((l) => l.trim() !== '' && !l.trim().startsWith('#'))?.match(/^\s*/)?.[0].length ?? 0;
  let key: string | undefined;
  for (const line of lines) {
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const lead = line.match(/^\s*/)![0].length;
    const m = new RegExp(`^ {${indent}}([A-Za-z0-9_.-]+):(.*)$`).exec(line);
    if (lead === indent && m) {
      key = m[1]!;
      out.set(key, m[2]!.trim() + '\n');
    } else if (key !== undefined && lead > indent) {
      out.set(key, out.get(key)! + line + '\n');
    }
  }
  return out;
}

const blocks = topLevelBlocks(compose);
const services = entries(blocks.get('services') ?? []);
const appImage = blocks.get('x-app-image')?.join('\n') ?? '';
const appEnv = blocks.get('x-app-env')?.join('\n') ?? '';
const volumes = entries(blocks.get('volumes') ?? []);

/** Variables the file requires (`${VAR:?message}`); the compose test supplies them. */
const requiredVars = [...new Set([...compose.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):\?/g)].map((m) => m[1]!))].sort();

const roles = ['gateway', 'content', 'admin', 'health', 'worker'] as const;

describe('docker-compose.yml (line scan, no YAML dependency)', () => {
  it('declares the production topology', () => {
    for (const name of ['postgres', 'meilisearch', 'mongodb', ...roles]) {
      expect([...services.keys()], `service ${name}`).toContain(name);
    }
  });

  it('uses the pinned backing images', () => {
    expect(services.get('postgres')).toMatch(/^\s*image:\s*postgres:18\s*$/m);
    expect(services.get('meilisearch')).toMatch(/^\s*image:\s*getmeili\/meilisearch:v1(\.\d+)*\s*$/m);
    expect(services.get('mongodb')).toMatch(/^\s*image:\s*mongo:8\s*$/m);
    expect(services.get('meilisearch')).toMatch(/MEILI_MASTER_KEY:\s*\$\{MEILI_MASTER_KEY:\?/);
  });

  it('builds every role from the one Dockerfile and sets its ROLE', () => {
    expect(appImage).toMatch(/^\s*dockerfile:\s*Dockerfile\s*$/m);
    expect(appImage).toMatch(/^\s*image:/m);
    for (const role of roles) {
      const block = services.get(role) ?? '';
      expect(block, role).toMatch(/^\s*<<:\s*\*app-image\s*$/m);
      expect(block, role).toMatch(new RegExp(`^\\s*ROLE:\\s*${role}\\s*$`, 'm'));
      expect(block, role).toMatch(/^\s*<<:\s*\*app-env\s*$/m);
      expect(block, role).toMatch(/^\s*healthcheck:/m);
      expect(block, role).toMatch(/^\s*depends_on:/m);
    }
  });

  it('listens on all interfaces in containers and points at the backing services', () => {
    expect(appEnv).toMatch(/^\s*HOST:\s*0\.0\.0\.0\s*$/m);
    expect(appEnv).toMatch(/^\s*DATABASE_URL:\s*postgres:\/\/.*@postgres:5432\//m);
    expect(appEnv).toMatch(/^\s*MEILISEARCH_URL:\s*http:\/\/meilisearch:7700\s*$/m);
    expect(appEnv).toMatch(/^\s*MONGODB_URL:\s*mongodb:\/\/.*@mongodb:27017\//m);
    expect(appEnv).toMatch(/^\s*CONTENT_STORAGE_PATH:\s*\/data\/content\s*$/m);
    expect(appEnv).toMatch(/^\s*CACHE_STORAGE_PATH:\s*\/data\/cache\s*$/m);
  });

  it('publishes only the gateway, which knows the subgraph URLs', () => {
    const gateway = services.get('gateway') ?? '';
    expect(gateway).toMatch(/^\s*ports:/m);
    expect(gateway).toMatch(/:8080"?\s*$/m);
    for (const sub of ['content', 'admin', 'health']) {
      expect(gateway).toMatch(new RegExp(`SUBGRAPH_${sub.toUpperCase()}_URL:\\s*http://${sub}:8080/graphql`));
      expect(services.get(sub), sub).not.toMatch(/^\s*ports:/m);
    }
    expect(services.get('worker')).not.toMatch(/^\s*ports:/m);
  });

  it('scales the workers and shares the content and cache volumes', () => {
    expect(services.get('worker')).toMatch(/^\s*replicas:\s*2\s*$/m);
    expect([...volumes.keys()]).toEqual(expect.arrayContaining(['content-storage', 'cache-storage']));
    const shared = blocks.get('x-app-volumes')?.join('\n') ?? '';
    expect(shared).toMatch(/content-storage:\/data\/content/);
    expect(shared).toMatch(/cache-storage:\/data\/cache/);
    for (const role of ['content', 'worker']) {
      expect(services.get(role), role).toMatch(/^\s*volumes:\s*\*app-volumes\s*$/m);
    }
  });

  it('waits for healthy dependencies', () => {
    for (const name of ['postgres', 'meilisearch', 'mongodb']) {
      expect(services.get(name), name).toMatch(/^\s*healthcheck:/m);
    }
    expect(blocks.get('x-backing-services')?.join('\n')).toMatch(/condition:\s*service_healthy/);
    expect(services.get('gateway')).toMatch(/condition:\s*service_healthy/);
    expect(blocks.get('x-app-healthcheck')?.join('\n')).toMatch(/\/readyz/);
  });

  it('requires the secrets instead of shipping default passwords', () => {
    expect(requiredVars).toEqual(expect.arrayContaining(['ADMIN_PASSWORD', 'MEILI_MASTER_KEY', 'MONGO_PASSWORD', 'POSTGRES_PASSWORD']));
    expect(compose).not.toMatch(/PASSWORD:-/);
  });
});

describe('Dockerfile and .dockerignore', () => {
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const dockerignore = readFileSync(path.join(root, '.dockerignore'), 'utf8').split(/\r?\n/).map((l) => l.trim());

  it('builds in stages and runs the compiled entry point as a non-root user', () => {
    expect(dockerfile.match(/^FROM\s/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/tsc -p tsconfig\.json/);
    expect(dockerfile).toMatch(/^USER\s+node\s*$/m);
    expect(dockerfile).toMatch(/^EXPOSE\s+8080\s*$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK\s/m);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/app\/main\.js"\]$/m);
  });

  it('keeps local state out of the build context', () => {
    for (const entry of ['node_modules', 'dist', '.data', '.git']) expect(dockerignore, entry).toContain(entry);
  });
});

describe('docker compose config', () => {
  function runConfig(env: Record<string, string>): ReturnType<typeof spawnSync> {
    // An empty env file, so that a local .env does not change the outcome.
    const dir = mkdtempSync(path.join(tmpdir(), 'compose-test-'));
    const envFile = path.join(dir, 'empty.env');
    writeFileSync(envFile, '');
    const base = { ...process.env };
    for (const name of requiredVars) delete base[name];
    try {
      return spawnSync('docker', ['compose', '--env-file', envFile, '-f', composeFile, 'config', '--quiet'], {
        cwd: root,
        env: { ...base, ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it.skipIf(!hasCompose)('`docker compose config --quiet` accepts the file (needs the docker compose v2 plugin)', () => {
    const secrets = Object.fromEntries(requiredVars.map((name) => [name, `test-${name.toLowerCase()}-0123456789`]));
    const r = runConfig(secrets);
    expect(r.status, `${r.stderr}`).toBe(0);
  });

  it.skipIf(!hasCompose)('`docker compose config` refuses to run without the required secrets (needs the docker compose v2 plugin)', () => {
    const r = runConfig({});
    expect(r.status).not.toBe(0);
    expect(`${r.stderr}`).toMatch(new RegExp(requiredVars.join('|')));
  });
});
