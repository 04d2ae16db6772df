import { LRUCache } from 'lru-cache';
import type { Principal } from './principal.js';

/**
 * Sessions verified in the last few seconds. A REST upload resolves its session twice (the bytes,
 * then its GraphQL operation) and a busy client many times a second; each was a database read.
 * Logout, user deletion and membership changes in this process forget at once; other processes drop
 * the entry when they hear the `session_ended` or `memberships_changed` notification (src/service.ts),
 * at the latest after the time to live.
 */
export class SessionCache {
  private readonly entries: LRUCache<string, Principal>;
  /**
   * Counts the forgetting: a principal read while a change was announced may be the old one (its read
   * began before the notification, its answer came after), and is not kept.
   */
  private forgotten = 0;

  constructor(
    private readonly ttlMs = 5_000,
    maxEntries = 10_000,
  ) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlMs });
  }

  get(tokenHash: string): Principal | undefined {
    return this.entries.get(tokenHash);
  }

  /** Taken before a session is read from the database, and given back to `set` with what was read. */
  mark(): number {
    return this.forgotten;
  }

  /**
   * `validUntil` (epoch ms): when the session expires, idle or at its end: a session is never honoured
   * from here past its expiry, however recently it was verified.
   */
  set(tokenHash: string, principal: Principal, mark: number, validUntil = Number.POSITIVE_INFINITY): void {
    const ttl = Math.min(this.ttlMs, validUntil - Date.now());
    if (mark === this.forgotten && ttl > 0) this.entries.set(tokenHash, principal, { ttl });
  }

  forget(tokenHash: string): void {
    this.forgotten++;
    this.entries.delete(tokenHash);
  }

  /** Ended sessions may have gone unannounced (a lost listener connection): each is verified again. */
  clear(): void {
    this.forgotten++;
    this.entries.clear();
  }

  forgetUser(userName: string): void {
    this.forgotten++;
    const keys = [...this.entries.entries()].filter(([, principal]) => principal.userName === userName).map(([key]) => key);
    for (const key of keys) this.entries.delete(key);
  }
}
