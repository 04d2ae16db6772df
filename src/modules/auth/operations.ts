import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import { conflict, illegalArguments, notAuthenticated, notFound, ServiceError, isUniqueViolation } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import type { Principal } from './principal.js';
import { FailureRateLimiter } from './rate-limiter.js';
import { SessionCache } from './session-cache.js';
import { Session, User, roles as knownRoles, type Role } from './user.entity.js';

/** Guessing one user's password is slowed hard; one address (maybe many users behind a NAT) less so. */
export const failedLoginsPerUser = new FailureRateLimiter(5, 60_000);
export const failedLoginsPerAddress = new FailureRateLimiter(30, 60_000);

export const verifiedSessions = new SessionCache(5_000, 10_000);

const hashToken = (token: string) => createHash('sha256').update(token).digest('base64url');
const userNamePattern = /^[A-Za-z0-9._@-]{1,64}$/;

export interface SessionPolicy {
  idleMinutes: number;
  maxHours: number;
}

/** Spec endpoint 14: a 256-bit random session id for a valid user and password (stored hashed). */
export async function authenticate(
  em: EntityManager,
  input: { user: string; password: string; address: string },
  policy: SessionPolicy,
): Promise<string> {
  failedLoginsPerUser.assertAllowed(input.user);
  failedLoginsPerAddress.assertAllowed(input.address);
  const user = userNamePattern.test(input.user) ? await em.findOne(User, { userName: input.user }) : null;
  const valid = await verifyPassword(input.password, user?.passwordHash ?? decoyHash);
  if (!user || !valid) {
    failedLoginsPerUser.recordFailure(input.user);
    failedLoginsPerAddress.recordFailure(input.address);
    // one answer for an unknown user and a wrong password
    throw notAuthenticated('unknown user or wrong password');
  }
  failedLoginsPerUser.reset(input.user);
  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  em.create(Session, {
    tokenHash: hashToken(token),
    userName: user.userName,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + policy.maxHours * 3_600_000),
  });
  await em.flush();
  return token;
}

/** The principal of a session id, or a 401. Idle and absolute expiry end a session. */
export async function resolveSession(em: EntityManager, token: string | undefined, policy: SessionPolicy): Promise<Principal> {
  if (!token) throw notAuthenticated('a session is required: pass sessionId or an Authorization: Bearer header');
  const tokenHash = hashToken(token);
  const now = Date.now();
  const cached = verifiedSessions.get(tokenHash, now);
  if (cached) return cached;
  const rows = await em.getConnection().execute<{ user_name: string; roles: Role[]; last_seen_at: string | Date; expires_at: string | Date }[]>(
    `select s.user_name, u.roles, s.last_seen_at, s.expires_at
       from user_session s join app_user u on u.user_name = s.user_name where s.token_hash = ?`,
    [tokenHash],
  );
  const session = rows[0];
  if (!session) throw notAuthenticated('unknown or expired session');
  const idleLimit = policy.idleMinutes * 60_000;
  const lastSeen = new Date(session.last_seen_at).getTime();
  if (new Date(session.expires_at).getTime() <= now || now - lastSeen > idleLimit) {
    await em.getConnection().execute('delete from user_session where token_hash = ?', [tokenHash]);
    throw notAuthenticated('unknown or expired session');
  }
  // refresh the idle clock at most once a minute, not on every call
  if (now - lastSeen > 60_000) {
    await em.getConnection().execute('update user_session set last_seen_at = now() where token_hash = ?', [tokenHash]);
  }
  const principal: Principal = { userName: session.user_name, roles: session.roles };
  verifiedSessions.set(tokenHash, principal, now);
  return principal;
}

export async function logout(em: EntityManager, token: string): Promise<void> {
  verifiedSessions.forget(hashToken(token));
  await em.getConnection().execute('delete from user_session where token_hash = ?', [hashToken(token)]);
}

export interface UserRecord {
  userName: string;
  roles: Role[];
  createdAt: Date;
}

const toRecord = (user: User): UserRecord => ({ userName: user.userName, roles: user.roles, createdAt: user.createdAt });

export async function createUser(em: EntityManager, input: { userName: string; password: string; roles: string[] }): Promise<UserRecord> {
  if (!userNamePattern.test(input.userName)) throw illegalArguments('userName: 1 to 64 letters, digits or . _ @ -');
  if (input.password.length < 8) throw illegalArguments('password: at least 8 characters');
  const unknownRole = input.roles.find((role) => !(knownRoles as readonly string[]).includes(role));
  if (unknownRole) throw illegalArguments(`roles: unknown role '${unknownRole}' (known: ${knownRoles.join(', ')})`);
  const user = em.create(User, {
    userName: input.userName,
    passwordHash: await hashPassword(input.password),
    roles: input.roles.length > 0 ? (input.roles as Role[]) : ['USER'],
    createdAt: new Date(),
  });
  try {
    await em.flush();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`user '${input.userName}' exists`);
    throw error;
  }
  return toRecord(user);
}

export async function listUsers(em: EntityManager): Promise<UserRecord[]> {
  return (await em.find(User, {}, { orderBy: { userName: 'asc' } })).map(toRecord);
}

export async function deleteUser(em: EntityManager, actor: Principal, userName: string): Promise<void> {
  if (userName === actor.userName) throw new ServiceError('conflict', 'you cannot delete your own user');
  const deleted = await em.nativeDelete(User, { userName });
  if (deleted === 0) throw notFound(`user '${userName}' not found`);
  verifiedSessions.forgetUser(userName);
}

/**
 * The first administrator (DESIGN §2). ADMIN_PASSWORD, when given, is the administrator's password at
 * every start; without it a random one is generated once, printed, and kept in $DATA_DIR/admin-password.
 */
export async function ensureAdministrator(em: EntityManager, config: Config, logger: Logger): Promise<void> {
  const existing = await em.findOne(User, { userName: config.ADMIN_USER });
  if (existing) {
    if (config.ADMIN_PASSWORD && !(await verifyPassword(config.ADMIN_PASSWORD, existing.passwordHash))) {
      existing.passwordHash = await hashPassword(config.ADMIN_PASSWORD);
      if (!existing.roles.includes('ADMIN')) existing.roles = [...existing.roles, 'ADMIN'];
      await em.flush();
      logger.info({ user: config.ADMIN_USER }, 'administrator password set from ADMIN_PASSWORD');
    }
    return;
  }
  const password = config.ADMIN_PASSWORD ?? randomBytes(15).toString('base64url');
  em.create(User, { userName: config.ADMIN_USER, passwordHash: await hashPassword(password), roles: ['ADMIN'], createdAt: new Date() });
  await em.flush();
  if (!config.ADMIN_PASSWORD) {
    const file = path.join(config.dataDir, 'admin-password');
    await fs.mkdir(config.dataDir, { recursive: true });
    await fs.writeFile(file, `${password}\n`, { mode: 0o600 });
    // printed once, on the first start only
    process.stdout.write(`\nAdministrator '${config.ADMIN_USER}' created with password: ${password}\n(also written to ${file})\n\n`);
  }
  logger.info({ user: config.ADMIN_USER }, 'administrator created');
}
