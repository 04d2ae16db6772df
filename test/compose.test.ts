import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

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

/** The file as compose reads it: anchors resolved, `<<` merge keys applied. */
interface ComposeService {
  image?: string;
  build?: { dockerfile?: string };
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test?: string[] | string };
  depends_on?: Record<string, { condition?: string }>;
  deploy?: { replicas?: number };
}
const parsed = parseYaml(compose, { merge: true, maxAliasCount: 1000 }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const services = parsed.services;

/** Variables the file requires (`${VAR:?message}`); the compose test supplies them. */
const requiredVars = [...new Set([...compose.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):\?/g)].map((m) => m[1]!))].sort();

const roles = ['gateway', 'content', 'admin', 'health', 'worker'] as const;
const backing = ['postgres', 'meilisearch', 'mongodb'] as const;
const service = (name: string): ComposeService => services[name] ?? {};

describe('docker-compose.yml', () => {
  it('declares the production topology', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining([...backing, ...roles]));
  });

  it('uses the pinned backing images', () => {
    expect(service('postgres').image).toBe('postgres:18');
    expect(service('meilisearch').image).toMatch(/^getmeili\/meilisearch:v1(\.\d+)*$/);
    expect(service('mongodb').image).toBe('mongo:8');
    expect(service('meilisearch').environment?.MEILI_MASTER_KEY).toMatch(/^\$\{MEILI_MASTER_KEY:\?/);
  });

  it('builds every role from the one Dockerfile and sets its ROLE', () => {
    const images = new Set(roles.map((role) => service(role).image));
    expect(images.size).toBe(1);
    for (const role of roles) {
      const { build, environment, healthcheck, depends_on } = service(role);
      expect(build?.dockerfile, role).toBe('Dockerfile');
      expect(environment?.ROLE, role).toBe(role);
      expect(environment?.DATABASE_URL, role).toBeDefined(); // the shared environment
      expect(healthcheck, role).toBeDefined();
      expect(depends_on, role).toBeDefined();
    }
  });

  it('listens on all interfaces in containers and points at the backing services', () => {
    for (const role of roles) {
      const environment = service(role).environment ?? {};
      expect(environment.HOST, role).toBe('0.0.0.0');
      expect(environment.DATABASE_URL, role).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(environment.MEILISEARCH_URL, role).toBe('http://meilisearch:7700');
      expect(environment.MONGODB_URL, role).toMatch(/^mongodb:\/\/.*@mongodb:27017\//);
      expect(environment.CONTENT_STORAGE_PATH, role).toBe('/data/content');
      expect(environment.CACHE_STORAGE_PATH, role).toBe('/data/cache');
    }
  });

  it('publishes only the gateway, which knows the subgraph URLs', () => {
    const gateway = service('gateway');
    expect(gateway.ports).toEqual([expect.stringMatching(/:8080$/)]);
    for (const sub of ['content', 'admin', 'health']) {
      expect(gateway.environment?.[`SUBGRAPH_${sub.toUpperCase()}_URL`]).toBe(`http://${sub}:8080/graphql`);
      expect(service(sub).ports, sub).toBeUndefined();
    }
    expect(service('worker').ports).toBeUndefined();
  });

  it('scales the workers and shares the content and cache volumes', () => {
    expect(service('worker').deploy?.replicas).toBe(2);
    expect(Object.keys(parsed.volumes)).toEqual(expect.arrayContaining(['content-storage', 'cache-storage']));
    for (const role of roles) {
      expect(service(role).volumes, role).toEqual(expect.arrayContaining(['content-storage:/data/content', 'cache-storage:/data/cache']));
    }
  });

  it('waits for healthy dependencies', () => {
    for (const name of backing) expect(service(name).healthcheck, name).toBeDefined();
    for (const role of roles.filter((role) => role !== 'gateway')) {
      for (const name of backing) expect(service(role).depends_on?.[name]?.condition, `${role} → ${name}`).toBe('service_healthy');
    }
    for (const sub of ['content', 'admin', 'health']) expect(service('gateway').depends_on?.[sub]?.condition).toBe('service_healthy');
    expect(JSON.stringify(service('gateway').healthcheck?.test)).toMatch(/\/readyz/);
  });

  it('requires the secrets instead of shipping default passwords', () => {
    expect(requiredVars).toEqual(expect.arrayContaining(['ADMIN_PASSWORD', 'MEILI_MASTER_KEY', 'MONGO_PASSWORD', 'POSTGRES_PASSWORD']));
    expect(compose).not.toMatch(/PASSWORD:-/);
  });
});

describe('docker-compose.yml, profile s3', () => {
  it('passes the S3 settings to every role and runs MinIO with its buckets only in the s3 profile', () => {
    for (const role of roles) {
      for (const name of ['S3_ENDPOINT', 'S3_BUCKET', 'S3_CACHE_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE', 'STORAGE_BACKEND']) {
        expect(service(role).environment?.[name], `${role} ${name}`).toBe(`\${${name}:-}`);
      }
    }
    const minio = service('minio') as ComposeService & { profiles?: string[]; entrypoint?: string[] };
    const buckets = service('minio-buckets') as ComposeService & { profiles?: string[]; entrypoint?: string[] };
    expect(minio.profiles).toEqual(['s3']);
    expect(buckets.profiles).toEqual(['s3']);
    expect(minio.image).toMatch(/^minio\/minio:RELEASE\./);
    expect(buckets.image).toBe(minio.image);
    // no published port, no default credentials
    expect(minio.ports).toBeUndefined();
    expect(minio.entrypoint?.join(' ')).toContain('set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
    expect(buckets.entrypoint?.join(' ')).toContain('mc mb --ignore-existing');
    expect(buckets.depends_on).toEqual({ minio: { condition: 'service_healthy' } });
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
    expect(dockerfile).toMatch(/^CMD \["node", "--expose-gc", "dist\/app\/main\.js"\]$/m);
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
