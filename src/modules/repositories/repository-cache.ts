import type { EntityManager } from '@mikro-orm/postgresql';
import { currentRepository, type RepositoryRecord } from './operations.js';

/**
 * Repositories read in the last few seconds, by name, in one process (held by `Services`): every call
 * of the content domain names its repository, and they change rarely. A change is forgotten at once in
 * the process that made it (`forget`) and, through the `repository_changed` notification, in every
 * other process (src/service.ts listens); the time to live bounds only what a lost listener misses.
 */
export class RepositoryCache {
  private readonly records = new Map<string, { record: RepositoryRecord; until: number }>();
  /**
   * Counts the forgetting: a record read while a change was announced may be the old one, and is not
   * kept (the read began before the notification, its answer came after).
   */
  private forgotten = 0;

  constructor(private readonly ttlMs = 5_000) {}

  /** `unitOfWork`: whose entity manager reads the record when it is not held (only then: a request's is made when first used). */
  async find(unitOfWork: { readonly em: EntityManager }, name: string): Promise<RepositoryRecord> {
    const cached = this.records.get(name);
    if (cached && cached.until > Date.now()) return cached.record;
    const before = this.forgotten;
    const record = await currentRepository(unitOfWork.em, name);
    if (this.forgotten === before) this.records.set(name, { record, until: Date.now() + this.ttlMs });
    return record;
  }

  forget(name: string): void {
    this.forgotten++;
    this.records.delete(name);
  }

  /** Notifications may have been missed (the listener reconnected): every record is read again. */
  forgetAll(): void {
    this.forgotten++;
    this.records.clear();
  }
}
