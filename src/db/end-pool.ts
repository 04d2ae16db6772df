import type pg from 'pg';

/**
 * Ends a pg pool and waits until each of its connections has closed. `pool.end()` resolves once its
 * idle clients are asked to end, not when they have: a database stopped right after (the service's
 * shutdown stops the embedded Postgres last) then terminated them, and each pool logged "terminating
 * connection due to administrator command". Ending a pool twice throws, as `pool.end()` does.
 */
export async function endPool(pool: pg.Pool): Promise<void> {
  let open = pool.totalCount;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    pool.on('remove', () => {
      if (--open <= 0) resolve();
    });
  });
  await pool.end();
  await closed;
}
