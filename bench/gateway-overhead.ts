/**
 * Gateway overhead (issue #2): requests/second of one small read, `folder(repository, id) { … }`,
 *   (a) straight to the content subgraph over HTTP (startSubgraphServer: Apollo Server + Koa),
 *   (b) through the Hive Gateway at {base}/graphql (the service as it runs, subgraphs in process),
 *   (c) through the REST compatibility layer, GET C/folder/{id}?sessionId=… (get-folder document).
 *   (d) a bare peer (issue 27 item 1): `node:http` + `pg`, the same session lookup (the hashed token's
 *       row joined with its user, expiry checked) and the same row read on the same Postgres, answering
 *       the folder's fields as JSON — what any service must at least do for this read.
 * (b)/(a) and (c)/(a) are printed against the target ≥ 0.5, and (c)/(d) against ≥ 0.8.
 * The gateway's two custom paths are measured in the same run with their switch off (b′, b″, c″: the
 * same service, started again on the same database with GATEWAY_HTTP_FAST_PATH=false or
 * GATEWAY_SINGLE_SUBGRAPH_SHORTCUT=false), and each path's gain printed (issue 12: ≥ 15 % or removed).
 *
 * The servers run in a child process (this file with argument `serve`: the real service plus a
 * subgraph server over the same services and database); autocannon runs here, so the load generator
 * does not share the servers' event loop. Every response is checked (2xx, no GraphQL errors, the
 * folder id in the body): any failure fails the benchmark.
 *
 *   npm run build && node dist/bench/gateway-overhead.js
 *   knobs: BENCH_CONNECTIONS (10), BENCH_SECONDS (8), BENCH_WARMUP_SECONDS (2), BENCH_ROUNDS (2),
 *   BENCH_CASES (all: a,b,c,d,bNoFastPath,bNoShortcut,cNoShortcut; fewer, e.g. `c` for a profile of
 *   one path alone, or `c,d` for more rounds of that ratio: the figures and ratios of those only)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { autocannon, type AutocannonOptions, type AutocannonResult as Result } from './autocannon.js';
import {
  ADMIN_PASSWORD,
  cpuSecondsOf,
  createFolder,
  fmt,
  header,
  login,
  makeTempDir,
  processTree,
  profileArgs,
  ratio,
  removeDir,
  REPOSITORY,
  runBench,
  targetsLine,
  verdict,
} from './lib.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SELECTED = process.env.BENCH_CASES?.split(',').map((key) => key.trim());
const TARGET = 0.5;
const BARE_TARGET = 0.8;

const QUERY = 'query Folder($repository: String!, $id: ID!) { folder(repository: $repository, id: $id) { id name owner createdAt } }';

interface Urls {
  base: string;
  subgraph: string;
  /** the same service with GATEWAY_HTTP_FAST_PATH=false */
  noFastPath: string;
  /** the same service with GATEWAY_SINGLE_SUBGRAPH_SHORTCUT=false */
  noShortcut: string;
  /** the bare peer: GET /folder/{id}?sessionId=… */
  bare: string;
}

/**
 * The bare peer (d): per request one statement for the session (by the SHA-256 of its token, as the
 * service stores it, with the user's row) and one for the folder, over a `pg` pool of the service's size.
 */
async function startBareReadServer(databaseUrl: string, repositoryId: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const server = http.createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url!, 'http://bare');
      const token = url.searchParams.get('sessionId') ?? '';
      const sessions = await pool.query<{ user_name: string; expires_at: Date; last_seen_at: Date }>(
        'select s.user_name, u.roles, s.expires_at, s.last_seen_at from user_session s join app_user u on u.user_name = s.user_name where s.token_hash = $1',
        [createHash('sha256').update(token).digest('base64url')],
      );
      const session = sessions.rows[0];
      if (!session || session.expires_at.getTime() <= Date.now()) return response.writeHead(401).end();
      const folders = await pool.query(
        `select id, name, parent_id, owner, created_by, created_at, last_modified_by, last_modified_at, active
           from entry where id = $1 and repository_id = $2 and entry_type = 'FOLDER'`,
        [url.pathname.split('/').pop(), repositoryId],
      );
      const folder = folders.rows[0];
      if (!folder) return response.writeHead(404).end();
      const date = (value: Date) => `${value.toISOString().slice(0, 23)}+0000`;
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          _type: 'svc.model.content.Folder',
          id: folder.id,
          name: folder.name,
          parentId: folder.parent_id,
          owner: folder.owner,
          createdBy: folder.created_by,
          createdAt: date(folder.created_at),
          lastModifiedBy: folder.last_modified_by,
          lastModifiedAt: date(folder.last_modified_at),
          active: folder.active,
        }),
      );
    })().catch((error: unknown) => response.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}

async function serve(dataDir: string): Promise<void> {
  // asked to stop (or the parent gone) while still starting: it stops once started, so that no Postgres is left behind
  let stopWhenStarted = false;
  let stop = () => {
    stopWhenStarted = true;
  };
  process.on('message', (message) => message === 'stop' && stop());
  process.on('disconnect', () => stop());
  // a message that arrives before its listener is lost: the parent asks to stop only after this one
  process.send!('listening');
  await import('reflect-metadata');
  const { loadConfig } = await import('../src/config.js');
  const { createLogger } = await import('../src/logger.js');
  const { startWholeService } = await import('../app/service.js');
  const { createRequestContext } = await import('../src/context.js');
  const { startSubgraphServer } = await import('../src/gateway/subgraph-server.js');
  const { buildSubgraphs } = await import('../src/subgraphs/index.js');

  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ADMIN_PASSWORD, LOG_LEVEL: 'silent' });
  const running = await startWholeService(config, createLogger('silent'));
  // the switched-off variants share the database (and so the session and the folder)
  const databaseUrl = running.services.orm.config.get('clientUrl')!;
  const variant = (env: Record<string, string>) =>
    startWholeService(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1', ADMIN_PASSWORD, LOG_LEVEL: 'silent', ...env }), createLogger('silent'));
  const noFastPath = await variant({ GATEWAY_HTTP_FAST_PATH: 'false' });
  const noShortcut = await variant({ GATEWAY_SINGLE_SUBGRAPH_SHORTCUT: 'false' });
  const subgraphs = await buildSubgraphs();
  const subgraph = await startSubgraphServer({
    schema: subgraphs.content.schema,
    createContext: (headers) => createRequestContext(running.services, headers),
    path: '/graphql',
    host: '127.0.0.1',
    port: 0,
  });
  const bare = await startBareReadServer(databaseUrl, `svc.repository.${REPOSITORY}`);
  let stopping = false;
  stop = () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await bare.stop();
      await subgraph.stop();
      await noFastPath.stop();
      await noShortcut.stop();
      await running.stop();
      process.exit(0);
    })();
  };
  if (stopWhenStarted || !process.connected) return stop();
  process.send!({ base: running.baseUrl, subgraph: subgraph.url, noFastPath: noFastPath.baseUrl, noShortcut: noShortcut.baseUrl, bare: bare.url } satisfies Urls);
}

interface Case {
  key: 'a' | 'b' | 'c' | 'd' | 'bNoFastPath' | 'bNoShortcut' | 'cNoShortcut';
  label: string;
  options: AutocannonOptions;
}

async function main(cleanup: (fn: () => Promise<void> | void) => void): Promise<void> {
  header('gateway overhead: one small read, subgraph direct vs gateway vs REST');
  const dataDir = makeTempDir('gateway');
  cleanup(() => removeDir(dataDir));
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['serve', dataDir], { execArgv: profileArgs(), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listening = new Promise<void>((resolve) => child.on('message', (m) => m === 'listening' && resolve()));
  cleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await Promise.race([listening, exited]);
    if (child.connected) child.send('stop');
    await exited;
    clearTimeout(timer);
  });
  const urls = await new Promise<Urls>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server child did not start in 120 s')), 120_000);
    child.on('message', (m) => m !== 'listening' && (clearTimeout(timer), resolve(m as Urls)));
    child.once('exit', (code) => reject(new Error(`the server child exited (${code}) before it was ready`)));
  });

  const session = await login(urls.base);
  const folderId = await createFolder(urls.base, session, 'bench-folder');
  const graphqlBody = JSON.stringify({ query: QUERY, variables: { repository: REPOSITORY, id: folderId } });
  const graphqlHeaders = { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${session}` };
  const okGraphql = (body: string) => body.includes(folderId) && !body.includes('"errors"');
  const okRest = (body: string) => body.includes(folderId) && body.includes('svc.model.content.Folder');
  const restPath = `/api/v1/access.svc.content.${REPOSITORY}/v1/folder/${folderId}?sessionId=${session}`;
  const restUrl = `${urls.base}${restPath}`;

  const cases: Case[] = [
    { key: 'a', label: '(a) content subgraph direct', options: { url: urls.subgraph, method: 'POST', headers: graphqlHeaders, body: graphqlBody, verifyBody: okGraphql } },
    { key: 'b', label: '(b) gateway /graphql', options: { url: `${urls.base}/graphql`, method: 'POST', headers: graphqlHeaders, body: graphqlBody, verifyBody: okGraphql } },
    { key: 'c', label: '(c) REST GET C/folder/{id}', options: { url: restUrl, method: 'GET', verifyBody: okRest } },
    { key: 'd', label: '(d) bare node:http + pg', options: { url: `${urls.bare}/folder/${folderId}?sessionId=${session}`, method: 'GET', verifyBody: okRest } },
    { key: 'bNoFastPath', label: "(b') gateway, fast path off", options: { url: `${urls.noFastPath}/graphql`, method: 'POST', headers: graphqlHeaders, body: graphqlBody, verifyBody: okGraphql } },
    { key: 'bNoShortcut', label: '(b") gateway, shortcut off', options: { url: `${urls.noShortcut}/graphql`, method: 'POST', headers: graphqlHeaders, body: graphqlBody, verifyBody: okGraphql } },
    { key: 'cNoShortcut', label: '(c") REST, shortcut off', options: { url: `${urls.noShortcut}${restPath}`, method: 'GET', verifyBody: okRest } },
  ];

  const measured = cases.filter((c) => !SELECTED || SELECTED.includes(c.key));
  // one checked request each, so that a wrong setup fails with its answer rather than as a count
  for (const c of measured) {
    const response = await fetch(c.options.url, { method: c.options.method, headers: c.options.headers, body: c.options.body as string | undefined });
    const text = await response.text();
    if (response.status !== 200 || !c.options.verifyBody!(text)) throw new Error(`${c.label}: unexpected answer ${response.status} ${text.slice(0, 500)}`);
  }
  console.log(`server child pid ${child.pid}; ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per case, ${ROUNDS} round(s)`);

  const series = (): Record<Case['key'], number[]> => ({ a: [], b: [], c: [], d: [], bNoFastPath: [], bNoShortcut: [], cNoShortcut: [] });
  const rps = series();
  const nodeCpu = series();
  const pgCpu = series();
  const check = (c: Case, r: Result) => {
    const bad = r.errors + r.timeouts + r.non2xx + r.mismatches;
    if (bad > 0) throw new Error(`${c.label}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx, ${r.mismatches} bad bodies`);
  };
  // CPU seconds of the server's node process, and of its descendants (the embedded Postgres)
  const cpu = () => {
    const [self, ...descendants] = processTree(child.pid!);
    return { node: cpuSecondsOf(self!), pg: descendants.reduce((s, p) => s + cpuSecondsOf(p), 0) };
  };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of measured) {
      check(c, await autocannon({ ...c.options, connections: CONNECTIONS, duration: WARMUP_SECONDS }));
      const cpu0 = cpu();
      const r = await autocannon({ ...c.options, connections: CONNECTIONS, duration: SECONDS });
      const cpu1 = cpu();
      check(c, r);
      const perSecond = r.requests.total / r.duration;
      const nodeUs = ((cpu1.node - cpu0.node) * 1e6) / r.requests.total;
      const pgUs = ((cpu1.pg - cpu0.pg) * 1e6) / r.requests.total;
      rps[c.key].push(perSecond);
      nodeCpu[c.key].push(nodeUs);
      pgCpu[c.key].push(pgUs);
      console.log(
        `round ${round} ${c.label.padEnd(30)} ${fmt(perSecond, 0).padStart(6)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  CPU/req: node ${fmt(nodeUs, 0)} µs + postgres ${fmt(pgUs, 0)} µs  (${r.requests.total} requests, all 2xx and checked)`,
      );
    }
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  // with BENCH_CASES, only the figures and ratios of the cases that ran
  const ran = (key: Case['key']) => rps[key].length > 0;
  const names = { a: '(a) subgraph direct', b: '(b) gateway', c: '(c) REST', d: '(d) bare' } as const;
  const mainCases = (Object.keys(names) as (keyof typeof names)[]).filter(ran);
  console.log('');
  console.log(`mean req/s: ${mainCases.map((key) => `${names[key]} ${fmt(mean(rps[key]), 0)}`).join(', ')}`);
  console.log(`mean server CPU per request (node + postgres): ${mainCases.map((key) => `(${key}) ${fmt(mean(nodeCpu[key]), 0)} + ${fmt(mean(pgCpu[key]), 0)} µs`).join(', ')}`);
  const ratios = [
    { name: 'gateway/direct', label: '(b)/(a) gateway/direct =', of: 'b', to: 'a', target: TARGET },
    { name: 'REST/direct', label: '(c)/(a) REST/direct    =', of: 'c', to: 'a', target: TARGET },
    { name: `REST/bare`, label: '(c)/(d) REST/bare      =', of: 'c', to: 'd', target: BARE_TARGET },
  ] as const;
  const measuredRatios = ratios.filter((r) => ran(r.of) && ran(r.to)).map((r) => ({ ...r, value: ratio(mean(rps[r.of]), mean(rps[r.to])) }));
  for (const r of measuredRatios) console.log(`ratio ${r.label} ${fmt(r.value, 2)} (target >= ${r.target}: ${verdict(r.value >= r.target)})`);
  const cpuRatios = (
    [
      ['direct/gateway', 'a', 'b'],
      ['direct/REST', 'a', 'c'],
      ['bare/REST', 'd', 'c'],
    ] as const
  ).filter(([, x, y]) => ran(x) && ran(y));
  if (cpuRatios.length > 0) {
    console.log(`(for a busy machine: the node CPU-per-request ratio, ${cpuRatios.map(([name, x, y]) => `${name} ${fmt(ratio(mean(nodeCpu[x]), mean(nodeCpu[y])), 2)}`).join(', ')})`);
  }
  // each switch's gain: req/s on ÷ off, and node CPU per request off ÷ on (the steadier figure on a loaded machine)
  const gain = (label: string, on: Case['key'], off: Case['key']) =>
    ran(on) &&
    ran(off) &&
    console.log(
      `gain of ${label.padEnd(34)} req/s ${fmt(ratio(mean(rps[on]), mean(rps[off])), 2)}×, node CPU/request ${fmt(ratio(mean(nodeCpu[off]), mean(nodeCpu[on])), 2)}× (${fmt(mean(nodeCpu[off]), 0)} → ${fmt(mean(nodeCpu[on]), 0)} µs)`,
    );
  gain('the HTTP fast path on (b)', 'b', 'bNoFastPath');
  gain('the single-subgraph shortcut on (b)', 'b', 'bNoShortcut');
  gain('the single-subgraph shortcut on (c)', 'c', 'cNoShortcut');
  const missed = measuredRatios.filter((r) => r.value < r.target).map((r) => (r.name === 'REST/bare' ? `REST/bare >= ${BARE_TARGET}` : r.name));
  console.log(targetsLine('gateway-overhead', measuredRatios.map((r) => `${r.name} ${fmt(r.value, 2)}`).join(', ') || `only ${SELECTED?.join(',')}`, missed));
}

if (process.argv[2] === 'serve') {
  await serve(process.argv[3]!);
} else {
  await runBench(main);
}
