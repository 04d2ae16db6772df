import pLimit, { type LimitFunction } from 'p-limit';
import type { Pool } from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError } from '../../errors.js';

/** Created by Migration20261122210000LoginLimits in the layout rate-limiter-flexible's Postgres store uses. */
export const loginAttemptTable = 'login_attempt';

export interface LoginLimitSettings {
  perUser: number;
  perAddress: number;
  windowSeconds: number;
}

/** Guessing one user's password is slowed hard; one address (maybe many users behind a NAT) less so. */
export const defaultLoginLimits: LoginLimitSettings = { perUser: 5, perAddress: 30, windowSeconds: 60 };

// the store's key column is varchar(255); longer names are not valid user names anyway
const userKey = (user: string) => user.toLowerCase().slice(0, 128);

/**
 * Login attempts per user name and failures per address (DESIGN §9), counted in the service's database
 * so that every process of a split deployment shares one count. A user's attempt is counted atomically
 * (one upsert) BEFORE its password is checked: concurrent guesses cannot slip past the limit while the
 * first ones are still being hashed. A successful login gives its attempt back.
 *
 * Counting first refused correct passwords sent at once (10 concurrent logins of one user: 5 were 429s
 * without a single failure), so the attempts of one user name run one after another in a process
 * (`oneAtATime`): each finds the count its predecessor left, a success given back included.
 */
export class LoginLimits {
  private readonly perUser: RateLimiterPostgres;
  private readonly perAddress: RateLimiterPostgres;
  /** per user name with attempts under way: the queue they wait in */
  private readonly queues = new Map<string, LimitFunction>();

  constructor(pool: Pool, settings: LoginLimitSettings = defaultLoginLimits) {
    const store = { storeClient: pool, storeType: 'pool', tableName: loginAttemptTable, tableCreated: true, duration: settings.windowSeconds };
    this.perUser = new RateLimiterPostgres({ ...store, keyPrefix: 'user', points: settings.perUser });
    this.perAddress = new RateLimiterPostgres({ ...store, keyPrefix: 'address', points: settings.perAddress });
  }

  /** Runs the attempt `attempt` of `user` after the attempts of that user under way in this process. */
  async oneAtATime<T>(user: string, attempt: () => Promise<T>): Promise<T> {
    const key = userKey(user);
    let queue = this.queues.get(key);
    if (!queue) this.queues.set(key, (queue = pLimit(1)));
    try {
      return await queue(attempt);
    } finally {
      if (queue.activeCount === 0 && queue.pendingCount === 0) this.queues.delete(key);
    }
  }

  /**
   * Counts an attempt of the user, or refuses it with 429 and the seconds until the window ends; so
   * does an address with as many failures as it may have. An address's failures are counted when they
   * happen (`failed`): counted before, 31 logins of different users at once from one address (a NAT, a
   * test runner) got 429s with the right passwords. Its guesses at once are bounded by the hashing queue.
   */
  async begin(user: string, address: string): Promise<void> {
    const addressAtLimit = async () => {
      const failures = await this.perAddress.get(address);
      if (failures && failures.consumedPoints >= this.perAddress.points) throw failures;
    };
    const outcomes = await Promise.allSettled([this.perUser.consume(userKey(user)), addressAtLimit()]);
    const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    if (refusals.length === 0) return;
    const storeFailure = refusals.find((reason) => !(reason instanceof RateLimiterRes));
    if (storeFailure) throw storeFailure;
    const retryAfter = Math.max(1, ...refusals.map((res) => Math.ceil((res as RateLimiterRes).msBeforeNext / 1000)));
    throw new ServiceError('tooManyRequests', `too many failed logins; retry in ${retryAfter} s`, undefined, retryAfter);
  }

  /** A wrong password or an unknown user: the address's failure is counted (the user's was, at `begin`). */
  async failed(address: string): Promise<void> {
    await this.perAddress.penalty(address, 1);
  }

  /** The attempt was not a guess after all: the user's count starts again. */
  async succeeded(user: string): Promise<void> {
    await this.perUser.delete(userKey(user));
  }

  /** The attempt was never checked (refused for capacity): it does not count. */
  async withdraw(user: string): Promise<void> {
    await this.perUser.reward(userKey(user), 1);
  }
}
