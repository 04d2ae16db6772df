import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';
import pLimit, { type LimitFunction } from 'p-limit';
import { ServiceError } from '../../errors.js';

const scrypt = (password: string, salt: Buffer, length: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

// scrypt is memory-hard (DESIGN §9): N=2^15, r=8 needs 32 MiB per hash
const cost = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/*
 * Passwords are hashed in NFC (NIST SP 800-63B §5.1.1.2): "é" typed as one character on one keyboard
 * and as "e" + U+0301 on another is the same password.
 */
async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password.normalize('NFC'), salt, 32, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const matches = async (candidate: string) =>
    timingSafeEqual(await scrypt(candidate, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: cost.maxmem }), expected);
  const normalised = password.normalize('NFC');
  if (await matches(normalised)) return true;
  // a hash made before passwords were normalised holds the password as it was typed then
  return normalised !== password && (await matches(password));
}

/** A hash nobody's password matches, verified for unknown users so both failures take the same time. */
export const decoyHash = await hashPassword(randomBytes(16).toString('hex'));

/**
 * scrypt runs in libuv's thread pool, beside every file read and write of downloads and uploads, and
 * keeps a core busy for its ~80 ms: half the pool and half the cores, so file I/O and the event loop
 * keep theirs.
 */
const hashingConcurrency = Math.max(1, Math.min(Math.floor((Number(process.env.UV_THREADPOOL_SIZE) || 4) / 2), Math.floor(availableParallelism() / 2)));

/**
 * Password hashing with bounded concurrency. A flood of logins would otherwise take every thread of
 * libuv's pool and every core, and downloads would wait behind them (12.7 s instead of 7 ms for 1 KB
 * during 300 parallel logins): a few hash at a time, a short queue (about a second) waits, and beyond
 * it a login is refused with 503 and Retry-After.
 */
export class PasswordHashing {
  private readonly limit: LimitFunction;

  constructor(concurrency = hashingConcurrency, private readonly maxWaiting = 16) {
    this.limit = pLimit(concurrency);
  }

  hash(password: string): Promise<string> {
    return this.run(() => hashPassword(password));
  }

  verify(password: string, stored: string): Promise<boolean> {
    return this.run(() => verifyPassword(password, stored));
  }

  private run<T>(task: () => Promise<T>): Promise<T> {
    if (this.limit.pendingCount >= this.maxWaiting) {
      return Promise.reject(new ServiceError('unavailable', 'too many logins at once; retry in 1 s', undefined, 1));
    }
    return this.limit(task);
  }
}
