import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, failure, type OperationsBench } from '../../../test/helpers/operations.js';
import { createContent } from '../entries/contents.js';
import { receiveUpload } from '../entries/uploads.js';
import type { EntryScope } from '../entries/scope.js';
import { checkIn, checkOut, replaceResource } from '../versions/operations.js';

/*
 * The text extraction queue as operations on a real database: the statement (or transaction) that
 * creates a version with new bytes queues them, so the extraction is as durable as the version; no
 * job runs here (the job system is not started), only what the operations write is checked.
 */

let bench: OperationsBench;
let alice: EntryScope;
beforeAll(async () => {
  bench = await createOperationsBench();
  alice = await bench.scopeOf('alice');
});
afterAll(() => bench?.stop());

const queued = async (resourceId: string | null | undefined) =>
  bench.services.orm.em.fork().getConnection().execute(`select repository_id from text_extraction_queue where resource_id = ?`, [resourceId]);
const resourceState = async (id: string) =>
  (await bench.services.orm.em.fork().getConnection().execute<{ state: string }[]>(`select state from resource where id = ?`, [id]))[0]?.state;

describe('text extraction queue', () => {
  it('a new content is queued by the statement that creates it; a failed create queues nothing and leaves the upload pending', async () => {
    const content = await createContent(alice, { uploadId: await bench.stage(alice, 'queued words'), name: 'queued.txt' });
    expect(await queued(content.resourceId)).toEqual([{ repository_id: alice.repository.id }]);

    const clashing = await bench.stage(alice, 'other words');
    expect(await failure(createContent(await bench.scopeOf('alice'), { uploadId: clashing, name: 'queued.txt' }))).toMatchObject({ reasonCode: 'conflict' });
    expect(await queued(clashing)).toEqual([]);
    expect(await resourceState(clashing)).toBe('pending');
  });

  it('replaced bytes and a check-in with a file are queued; nothing is queued when full text is disabled', async () => {
    const content = await createContent(alice, { uploadId: await bench.stage(alice, 'first'), name: 'versions.txt' });
    const replaced = await replaceResource(await bench.scopeOf('alice'), content.id, { uploadId: await bench.stage(alice, 'second') });
    expect(replaced.resourceId).not.toBe(content.resourceId);
    expect(await queued(replaced.resourceId)).toHaveLength(1);
    const copy = await checkOut(await bench.scopeOf('alice'), replaced.id);
    const checkedIn = await checkIn(await bench.scopeOf('alice'), copy.id, { uploadId: await bench.stage(alice, 'third') });
    expect(await queued(checkedIn.resourceId)).toHaveLength(1);

    const scope = await bench.scopeOf('alice');
    const disabled = { ...scope, repository: { ...scope.repository, fullTextEnabled: false } };
    const silent = await createContent(disabled, { uploadId: await bench.stage(disabled, 'silent'), name: 'silent.txt' });
    expect(await queued(silent.resourceId)).toEqual([]);
  });

  it('bytes received by the create carry whether their first bytes hold %PDF- (any name); a claimed pending upload leaves it to the extraction', async () => {
    const mark = async (resourceId: string | null | undefined) =>
      (await bench.services.orm.em.fork().getConnection().execute<{ pdf_mark: boolean | null }[]>(`select pdf_mark from text_extraction_queue where resource_id = ?`, [resourceId]))[0]?.pdf_mark;
    const received = async (bytes: string, fileName: string) => {
      const scope = await bench.scopeOf('alice');
      return createContent(scope, { received: await receiveUpload(scope, { source: Readable.from([Buffer.from(bytes)]), fileName }) });
    };
    expect(await mark((await received('junk%PDF-1.7 and more', 'report.bin')).resourceId)).toBe(true);
    expect(await mark((await received('no mark here', 'plain.bin')).resourceId)).toBe(false);
    expect(await mark((await received(`${'x'.repeat(1024)}%PDF-1.7`, 'late.bin')).resourceId)).toBe(false);
    const claimed = await createContent(await bench.scopeOf('alice'), { uploadId: await bench.stage(alice, 'junk%PDF-1.7'), name: 'claimed.bin' });
    expect(await mark(claimed.resourceId)).toBeNull();
  });
});
