/**
 * ACL maintenance at scale (issue 23 item 4): a folder with ACL_DESCENDANTS descendants (default
 * 10,000: 100 subfolders of 99 contents each, seeded by SQL under a repository of ACL_ROWS other
 * contents), then through REST, each ACL_SAMPLES times: the folder moved between two places with
 * different ACLs (PATCH C/folder/{id}: every descendant's effective ACL is recomputed), and its own ACL
 * changed (PUT C/folder/{id}/acl). Prints p50 / max of each and a last line
 * `acl: move <ms>, ACL change <ms> for <n> descendants (targets: MET)` — target: under 2 s each.
 *
 *   npm run bench -- acl        knobs: ACL_DESCENDANTS (10000), ACL_ROWS (100000), ACL_SAMPLES (5)
 */
import 'reflect-metadata';
import { CompiledQuery } from 'kysely';
import { contentBase, fmt, header, runBench, targetsLine, verdict } from './lib.js';
import { REPOSITORY_ID, startSeededService } from './seed.js';

const DESCENDANTS = Number(process.env.ACL_DESCENDANTS ?? 10_000);
const ROWS = Number(process.env.ACL_ROWS ?? 100_000);
const SAMPLES = Number(process.env.ACL_SAMPLES ?? 5);
const SUBFOLDERS = 100;
const TARGET_MS = 2_000;

async function main(cleanup: (fn: () => Promise<void> | void) => void): Promise<void> {
  header(`acl: a folder of ${DESCENDANTS.toLocaleString('en')} descendants in a repository of ${ROWS.toLocaleString('en')} contents, through REST`);
  const { service, orm, session } = await startSeededService('acl', ROWS, cleanup);
  const base = contentBase(service.baseUrl);
  const rest = async (method: string, path: string, body: unknown) => {
    const started = performance.now();
    const response = await fetch(`${base}${path}?sessionId=${session}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ms = performance.now() - started;
    if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return { ms, body: (await response.json()) as Record<string, unknown> };
  };
  const folder = async (name: string) => {
    const response = await fetch(`${base}/folder?sessionId=${session}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    return ((await response.json()) as { id: string }).id;
  };
  const [open, closed, big] = [await folder('open'), await folder('closed'), await folder('big')];
  await rest('PUT', `/folder/${closed}/acl`, { inherit: false, entries: [] });
  // the subtree, by SQL: its entries' ACLs are set by the insert trigger, as an upload's are
  const client = orm.em.getConnection().getClient();
  const perFolder = Math.ceil(DESCENDANTS / SUBFOLDERS) - 1;
  await client.executeQuery(
    CompiledQuery.raw(`
      insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, parent_id)
      select 'acl-f' || f, '${REPOSITORY_ID}', 'FOLDER', 'acl-f' || f, 'sub-' || f, 'admin', 'admin', 'admin', '${big}' from generate_series(1, ${SUBFOLDERS}) f`),
  );
  await client.executeQuery(
    CompiledQuery.raw(`
      insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, parent_id, version, version_major, version_minor, version_status)
      select 'acl-c' || f || '-' || c, '${REPOSITORY_ID}', 'CONTENT', 'acl-c' || f || '-' || c, 'doc-' || c, 'admin', 'admin', 'admin', 'acl-f' || f, '1.0', 1, 0, 'CURRENT'
      from generate_series(1, ${SUBFOLDERS}) f, generate_series(1, ${perFolder}) c`),
  );
  await client.executeQuery(CompiledQuery.raw('vacuum analyze entry'));
  const descendants = SUBFOLDERS * (perFolder + 1);

  const moves: number[] = [];
  const changes: number[] = [];
  for (let n = 0; n < SAMPLES; n++) {
    moves.push((await rest('PATCH', `/folder/${big}`, { parentId: n % 2 === 0 ? closed : open })).ms);
    changes.push((await rest('PUT', `/folder/${big}/acl`, { entries: n % 2 === 0 ? [{ principal: 'EVERYONE', permission: 'read' }] : [] })).ms);
  }
  // every descendant points at the ACL its place says
  const [check] = (
    await client.executeQuery<{ acls: string }>(CompiledQuery.raw(`select count(distinct acl_id) as acls from entry where parent_id in (select id from entry where parent_id = '${big}')`))
  ).rows;
  const worstMove = Math.max(...moves);
  const worstChange = Math.max(...changes);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`move of the folder (${descendants.toLocaleString('en')} descendants)  p50 ${fmt(median(moves))} ms  max ${fmt(worstMove)} ms  (target < ${TARGET_MS} ms: ${verdict(worstMove < TARGET_MS)})`);
  console.log(`change of its ACL                          p50 ${fmt(median(changes))} ms  max ${fmt(worstChange)} ms  (target < ${TARGET_MS} ms: ${verdict(worstChange < TARGET_MS)})`);
  console.log(`distinct effective ACLs below it afterwards: ${check!.acls} (one: they all inherit)`);
  const missed = [...(worstMove < TARGET_MS ? [] : ['move']), ...(worstChange < TARGET_MS ? [] : ['ACL change'])];
  console.log(targetsLine('acl', `move ${fmt(worstMove, 0)} ms, ACL change ${fmt(worstChange, 0)} ms for ${descendants} descendants`, missed));
}

await runBench(main);
