import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, type OperationsBench } from '../../../test/helpers/operations.js';
import { recordEvent } from './record.js';

// The outbox row commits or rolls back with the transaction that writes it.
let bench: OperationsBench;
const em = () => bench.services.orm.em.fork() as EntityManager;
const eventsOfActor = async (actor: string) =>
  em().execute<{ type: string; repository: string | null; entry_id: string | null; details: unknown }[]>(
    'select type, repository, entry_id, details from event where actor = ? order by id',
    [actor],
  );

beforeAll(async () => {
  bench = await createOperationsBench();
});
afterAll(() => bench?.stop());

describe('recordEvent', () => {
  it('writes the event in the given transaction: it is kept when the transaction commits', async () => {
    await em().transactional((tx) =>
      recordEvent(tx, { type: 'ENTRY_TAGGED', actor: 'kept', repository: { id: 'r1', name: 'docs' }, entryId: 'e1', chronicalId: 'c1', details: { added: ['a'] } }),
    );
    expect(await eventsOfActor('kept')).toEqual([{ type: 'ENTRY_TAGGED', repository: 'docs', entry_id: 'e1', details: { added: ['a'] } }]);
  });

  it('leaves nothing when the transaction rolls back after it', async () => {
    const failed = em().transactional(async (tx) => {
      await recordEvent(tx, { type: 'ENTRY_TAGGED', actor: 'rolled-back' });
      throw new Error('the change failed after its event was written');
    });
    await expect(failed).rejects.toThrow('the change failed');
    expect(await eventsOfActor('rolled-back')).toEqual([]);
  });
});
