import type { Services } from '../../context.js';

export interface HealthStatus {
  status: 'ok' | 'unavailable';
  database: boolean;
  contentStorage: boolean;
  cacheStorage: boolean;
  checkedAt: Date;
}

/** Readiness: the database answers and both storage areas are writable. */
export async function checkHealth(services: Services): Promise<HealthStatus> {
  const database = await services.orm.em
    .getConnection()
    .execute('select 1')
    .then(() => true, () => false);
  const [content, cache] = await Promise.all([services.contentStore.checkWritable(), services.cacheStore.checkWritable()]);
  const ok = database && content.ok && cache.ok;
  return { status: ok ? 'ok' : 'unavailable', database, contentStorage: content.ok, cacheStorage: cache.ok, checkedAt: new Date() };
}
