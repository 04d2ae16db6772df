import { ServiceError } from '../../errors.js';

/**
 * Failed authentications per key (a user name or an address) within a sliding window (DESIGN §9). In-process:
 * with several gateway processes each counts its own share, which still bounds guessing.
 */
export class FailureRateLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly maxFailures: number, private readonly windowMs: number) {}

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  assertAllowed(key: string, now = Date.now()): void {
    const list = this.recent(key, now);
    if (list.length >= this.maxFailures) {
      const retryAfter = Math.ceil((this.windowMs - (now - list[0]!)) / 1000);
      throw new ServiceError('tooManyRequests', `too many failed authentications; retry in ${retryAfter} s`);
    }
  }

  recordFailure(key: string, now = Date.now()): void {
    this.failures.set(key, [...this.recent(key, now), now]);
  }

  reset(key: string): void {
    this.failures.delete(key);
  }
}
