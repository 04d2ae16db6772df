import { LRUCache } from 'lru-cache';
import type { Principal } from './principal.js';

/**
 * Sessions verified in the last few seconds. A REST upload resolves its session twice (the bytes,
 * then its GraphQL operation) and a busy client many times a second; each was a database read.
 * Logout and user deletion in this process forget at once; other processes drop the entry when they
 * hear the `session_ended` notification (src/service.ts), at the latest after the time to live.
 */
export class SessionCache {
  private readonly entries: LRUCache<string, Principal>;

  constructor(ttlMs = 5_000, maxEntries = 10_000) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlMs });
  }

  get(tokenHash: string): Principal | undefined {
    return this.entries.get(tokenHash);
  }

  set(tokenHash: string, principal: Principal): void {
    this.entries.set(tokenHash, principal);
  }

  forget(tokenHash: string): void {
    this.entries.delete(tokenHash);
  }

  /** Ended sessions may have gone unannounced (a lost listener connection): each is verified again. */
  clear(): void {
    this.entries.clear();
  }

  forgetUser(userName: string): void {
    const keys = [...this.entries.entries()].filter(([, principal]) => principal.userName === userName).map(([key]) => key);
    for (const key of keys) this.entries.delete(key);
  }
}
