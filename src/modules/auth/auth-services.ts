import pg from 'pg';
import type { Logger } from '../../logger.js';
import { answerInCallbackForm } from '../../db/callback-queries.js';
import { endPool } from '../../db/end-pool.js';
import { LoginLimits } from './login-limits.js';
import { PasswordHashing } from './passwords.js';
import { SessionCache } from './session-cache.js';

/** The process-wide state of sessions and logins: one of each per process, kept in `Services`. */
export interface AuthServices {
  sessions: SessionCache;
  loginLimits: LoginLimits;
  passwords: PasswordHashing;
  close(): Promise<void>;
}

/** `databaseUrl`: the service's database, where the login counts every process shares live. */
export function createAuthServices(databaseUrl: string, logger: Logger): AuthServices {
  // rate-limiter-flexible speaks to node-postgres; a small pool of its own keeps logins off the ORM's
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', (error) => logger.warn({ err: error }, 'login-limit database connection failed'));
  pool.on('connect', answerInCallbackForm);
  return {
    sessions: new SessionCache(),
    loginLimits: new LoginLimits(pool),
    passwords: new PasswordHashing(),
    close: () => endPool(pool),
  };
}
