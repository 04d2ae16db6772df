import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newFolder } from '../../../test/helpers/entries.js';
import { startTestService, type TestService } from '../../../test/helpers/service.js';
import { entryWriteFailure } from './chronicles.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

/** The error Postgres raises for one raw insert of an entry. */
async function insertError(parentId: string | null, name: string): Promise<unknown> {
  const connection = service.services.orm.em.getConnection();
  return connection
    .execute(
      `insert into entry (id, repository_id, entry_type, chronical_id, name, owner, created_by, last_modified_by, parent_id)
       values (gen_random_uuid()::text, 'svc.repository.default', 'FOLDER', gen_random_uuid()::text, ?, 'admin', 'admin', 'admin', ?)`,
      [name, parentId],
    )
    .then(() => undefined, (error: unknown) => error);
}

describe('entryWriteFailure: what a failed entry write means for the caller', () => {
  it('a name taken in the folder is a 409 naming it', async () => {
    await newFolder(service, 'taken');
    const failure = entryWriteFailure(await insertError(null, 'taken'), "an active entry named 'taken' exists in that folder");
    expect(failure).toMatchObject({ status: 409, reasonCode: 'conflict', message: "an active entry named 'taken' exists in that folder" });
  });

  it('a folder deleted meanwhile (a foreign-key violation) is a 404, not a 500', async () => {
    const failure = entryWriteFailure(await insertError('no-such-folder', 'orphan'), 'unused');
    expect(failure).toMatchObject({ status: 404, reasonCode: 'notFound' });
  });

  it('leaves other errors alone', () => {
    expect(entryWriteFailure(new Error('disk on fire'), 'unused')).toBeUndefined();
  });
});
