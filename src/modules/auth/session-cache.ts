import type { Principal } from './principal.js';

/**
 * Sessions verified in the last few seconds. A REST upload resolves its session twice (the bytes,
 * then its GraphQL operation) and a busy client many times a second; each was a database read.
 * Logout and user deletion in this process forget at once; other processes (split mode) notice within
 * the time to live.
 */
export class SessionCache {
  private readonly entries = new Map<string, { principal: Principal; until: number }>();

  constructor(private readonly ttlMs: number, private readonly maxEntries: number) {}

  get(tokenHash: string, now = Date.now()): Principal | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.until > now) return entry.principal;
    this.entries.delete(tokenHash);
    return undefined;
  }

  set(tokenHash: string, principal: Principal, now = Date.now()): void {
    // Map keeps insertion order: the oldest entry goes first when full
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(tokenHash, { principal, until: now + this.ttlMs });
  }

  forget(tokenHash: string): void {
    this.entries.delete(tokenHash);
  }

  forgetUser(userName: string): void {
    for (const [key, entry] of this.entries) if (entry.principal.userName === userName) this.entries.delete(key);
  }
}
