import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers/service.js';
import { endPool } from './end-pool.js';

let url: string;
beforeAll(async () => {
  url = await createTestDatabase();
});

describe('endPool', () => {
  it('resolves once every idle connection has closed (pool.end() resolves when it has asked them to)', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 3 });
    const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
    const ended = clients.map(() => false);
    clients.forEach((client, index) => client.on('end', () => (ended[index] = true)));
    for (const client of clients) client.release();
    await endPool(pool);
    expect(ended).toEqual([true, true, true]);
    expect(pool.ended).toBe(true);
    await expect(endPool(pool)).rejects.toThrow('Called end on pool more than once');
  });

  it('waits for a connection checked out while the pool ends', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const client = await pool.connect();
    let ended = false;
    client.on('end', () => (ended = true));
    setTimeout(() => client.release(), 50);
    await endPool(pool);
    expect(ended).toBe(true);
  });
});
