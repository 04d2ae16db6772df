import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Services } from '../../context.js';
import { conflict, illegalArguments, notAuthenticated, notFound, ServiceError, isUniqueViolation } from '../../errors.js';
import { recordEvent } from '../events/record.js';
import { markClientJobsCancelled } from '../jobs/records.js';
import { groupsOfUserSql } from './groups.js';
import { isUserName, normalizeUserName, parseInput, userName as userNameSchema } from './names.js';
import { decoyHash } from './passwords.js';
import type { Principal } from './principal.js';
import { Session, User, roles as knownRoles, type Role } from './user.entity.js';

const hashToken = (token: string) => createHash('sha256').update(token).digest('base64url');
/** How a session is named outside this module (stored, and announced on the `session_ended` channel). */
export const sessionTokenHash = hashToken;
/** Postgres channel announcing the token hash of each session that ended (logout, user deleted) to every process. */
export const sessionEndedChannel = 'session_ended';

/** Another process (or this one) announced the end of a session: forget it here too. */
export function forgetEndedSession(services: Services, tokenHash: string): void {
  services.auth.sessions.forget(tokenHash);
}
const byName = (userName: string) => ({ [sql.lower('user_name')]: userName.toLowerCase() });

/** Spec endpoint 14: a 256-bit random session id for a valid user and password (stored hashed). */
export async function authenticate(
  em: EntityManager,
  services: Services,
  input: { user: string; password: string; address: string },
): Promise<string> {
  // an empty field is a malformed request, not a failed login (REST and GraphQL answer it alike: 400)
  if (input.user.trim() === '') throw illegalArguments('user must not be empty');
  if (input.password === '') throw illegalArguments('password must not be empty');
  const { loginLimits, passwords } = services.auth;
  const name = normalizeUserName(input.user);
  const user = await loginLimits.oneAtATime(name, async () => {
    await loginLimits.begin(name, input.address).catch(async (error: unknown) => {
      if (error instanceof ServiceError && error.reasonCode === 'tooManyRequests') await recordLoginFailure(em, name, input.address, 'tooManyAttempts');
      throw error;
    });
    const found = isUserName(name) ? await em.findOne(User, byName(name)) : null;
    let valid: boolean;
    try {
      valid = await passwords.verify(input.password, found?.passwordHash ?? decoyHash);
    } catch (error) {
      // refused for capacity: the password was not checked, so the attempt is not a failure
      await loginLimits.withdraw(name);
      throw error;
    }
    if (!found || !valid) {
      await loginLimits.failed(input.address);
      // its own statement (no transaction to roll back): the refusal below does not undo it
      await recordLoginFailure(em, name, input.address, 'wrongCredentials');
      // one answer for an unknown user and a wrong password
      throw notAuthenticated('unknown user or wrong password');
    }
    await loginLimits.succeeded(name);
    return found;
  });
  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  await em.transactional(async (tx) => {
    tx.create(Session, {
      tokenHash: hashToken(token),
      userName: user.userName,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + services.config.SESSION_MAX_HOURS * 3_600_000),
    });
    await tx.flush();
    await recordEvent(tx as EntityManager, { type: 'LOGIN_SUCCEEDED', actor: user.userName, details: { address: input.address } });
  });
  return token;
}

/** A refused login, kept under the user name asked for (which may name nobody; a user name has at most 64 characters): visible to that user and administrators. */
const recordLoginFailure = (em: EntityManager, userName: string, address: string, reason: 'wrongCredentials' | 'tooManyAttempts') =>
  recordEvent(em, { type: 'LOGIN_FAILED', actor: userName.slice(0, 64), details: { address, reason } });

/** What a call without a session hears (the GraphQL gateway says what /graphql takes instead). */
export const missingSessionMessage = 'a session is required: pass sessionId or an Authorization: Bearer header';

/** The principal of a session id, or a 401. Idle and absolute expiry end a session. */
export async function resolveSession(em: EntityManager, services: Services, token: string | undefined): Promise<Principal> {
  if (!token) throw notAuthenticated(missingSessionMessage);
  const { sessions } = services.auth;
  const tokenHash = hashToken(token);
  const cached = sessions.get(tokenHash);
  if (cached) return cached;
  const mark = sessions.mark();
  // the caller's groups in the same round trip (an index-only scan of group_member by user)
  const rows = await em
    .getConnection()
    .execute<{ user_name: string; roles: Role[]; groups: string[]; last_seen_at: string | Date; expires_at: string | Date }[]>(
      `select s.user_name, u.roles, s.last_seen_at, s.expires_at,
              ${groupsOfUserSql('s.user_name')} as groups
         from user_session s join app_user u on u.user_name = s.user_name where s.token_hash = ?`,
      [tokenHash],
    );
  const session = rows[0];
  if (!session) throw notAuthenticated('unknown or expired session');
  const now = Date.now();
  const idleLimit = services.config.SESSION_IDLE_MINUTES * 60_000;
  const lastSeen = new Date(session.last_seen_at).getTime();
  if (new Date(session.expires_at).getTime() <= now || now - lastSeen > idleLimit) {
    await em.getConnection().execute('delete from user_session where token_hash = ?', [tokenHash]);
    throw notAuthenticated('unknown or expired session');
  }
  // refresh the idle clock at most once a minute (not on every call), and well within the idle time
  // (with SESSION_IDLE_MINUTES=1, once a minute let a busy session expire)
  const refreshed = now - lastSeen > Math.min(60_000, idleLimit / 10);
  if (refreshed) {
    await em.getConnection().execute('update user_session set last_seen_at = now() where token_hash = ?', [tokenHash]);
  }
  const principal: Principal = { userName: session.user_name, roles: session.roles, groups: session.groups };
  sessions.set(tokenHash, principal, mark, Math.min(new Date(session.expires_at).getTime(), (refreshed ? now : lastSeen) + idleLimit));
  return principal;
}

export async function logout(em: EntityManager, services: Services, token: string): Promise<void> {
  const tokenHash = hashToken(token);
  services.auth.sessions.forget(tokenHash);
  // one statement: the session goes and its end is announced together (none for an unknown token)
  await em
    .getConnection()
    .execute(`with ended as (delete from user_session where token_hash = ? returning token_hash) select pg_notify('${sessionEndedChannel}', token_hash) from ended`, [tokenHash]);
}

export interface UserRecord {
  userName: string;
  roles: Role[];
  createdAt: Date;
}

const toRecord = (user: User): UserRecord => ({ userName: user.userName, roles: user.roles, createdAt: user.createdAt });

const newUserName = z.object({ userName: userNameSchema });

/**
 * The password policy (docs/administration.md): 8 to 256 characters, not only one character
 * repeated, and not the user name in any case. Length is what makes a password strong; composition
 * rules are left out, as NIST SP 800-63B advises.
 */
function checkPasswordPolicy(userName: string, password: string): void {
  if (password.length < 8 || password.length > 256) throw illegalArguments('password: 8 to 256 characters');
  if (new Set(password).size === 1) throw illegalArguments('password: must not be one character repeated');
  if (password.toLowerCase() === userName.toLowerCase()) throw illegalArguments('password: must not be the user name');
}

export async function createUser(
  em: EntityManager,
  services: Services,
  actor: Principal,
  input: { userName: string; password: string; roles: string[] },
): Promise<UserRecord> {
  const { userName } = parseInput(newUserName, input);
  checkPasswordPolicy(userName, input.password);
  const unknownRole = input.roles.find((role) => !(knownRoles as readonly string[]).includes(role));
  if (unknownRole) throw illegalArguments(`roles: unknown role '${unknownRole}' (known: ${knownRoles.join(', ')})`);
  const passwordHash = await services.auth.passwords.hash(input.password);
  try {
    return await em.transactional(async (tx) => {
      const user = tx.create(User, {
        userName,
        passwordHash,
        // each role once (["ADMIN", "ADMIN"] was stored so)
        roles: input.roles.length > 0 ? ([...new Set(input.roles)] as Role[]) : ['USER'],
        createdAt: new Date(),
      });
      await tx.flush();
      await recordEvent(tx as EntityManager, { type: 'USER_CREATED', actor: actor.userName, details: { userName, roles: user.roles } });
      return toRecord(user);
    });
  } catch (error) {
    // the unique index on lower(user_name) also refuses a name that differs only in case
    if (isUniqueViolation(error)) throw conflict(`user '${userName}' exists`);
    throw error;
  }
}

export async function listUsers(em: EntityManager): Promise<UserRecord[]> {
  return (await em.find(User, {}, { orderBy: { userName: 'asc' } })).map(toRecord);
}

/** DELETE A/user: the user, their sessions, and their pending and running jobs (cancelled), in one transaction. */
export async function deleteUser(em: EntityManager, services: Services, actor: Principal, userName: string): Promise<void> {
  const user = await em.findOne(User, byName(normalizeUserName(userName)));
  if (!user) throw notFound(`user '${userName}' not found`);
  if (user.userName === actor.userName) throw new ServiceError('conflict', 'you cannot delete your own user');
  await em.transactional(async (tx) => {
    const connection = tx.getConnection();
    // the administrators' rows are locked, so two administrators deleting each other leave one
    const admins = await connection.execute<{ user_name: string }[]>(
      `select user_name from app_user where 'ADMIN' = any(roles) order by user_name for update`,
      [],
      'all',
      tx.getTransactionContext(),
    );
    if (user.roles.includes('ADMIN') && !admins.some((admin) => admin.user_name !== user.userName)) {
      throw conflict(`user '${user.userName}' is the last administrator`);
    }
    // announced before the sessions go with the user (the notifications are sent at commit)
    await connection.execute(`select pg_notify('${sessionEndedChannel}', token_hash) from user_session where user_name = ?`, [user.userName], 'all', tx.getTransactionContext());
    const deleted = await tx.nativeDelete(User, { userName: user.userName });
    if (deleted === 0) throw notFound(`user '${userName}' not found`);
    // the user's jobs end with the user: pending ones never start, running ones hear it (NOTIFY at commit) and stop
    await markClientJobsCancelled(tx as EntityManager, user.userName, `cancelled: its user '${user.userName}' was deleted`);
    await recordEvent(tx as EntityManager, { type: 'USER_DELETED', actor: actor.userName, details: { userName: user.userName } });
  });
  services.auth.sessions.forgetUser(user.userName);
}

/**
 * The first administrator (DESIGN §2). ADMIN_PASSWORD, when given, is the administrator's password at
 * every start; without it a random one is generated once, printed, and kept in $DATA_DIR/admin-password.
 */
export async function ensureAdministrator(em: EntityManager, services: Services): Promise<void> {
  const { config, logger } = services;
  const { passwords } = services.auth;
  const existing = await em.findOne(User, byName(config.ADMIN_USER));
  if (existing) {
    if (config.ADMIN_PASSWORD && !(await passwords.verify(config.ADMIN_PASSWORD, existing.passwordHash))) {
      existing.passwordHash = await passwords.hash(config.ADMIN_PASSWORD);
      if (!existing.roles.includes('ADMIN')) existing.roles = [...existing.roles, 'ADMIN'];
      await em.flush();
      logger.info({ user: existing.userName }, 'administrator password set from ADMIN_PASSWORD');
    }
    return;
  }
  const password = config.ADMIN_PASSWORD ?? randomBytes(15).toString('base64url');
  em.create(User, { userName: config.ADMIN_USER, passwordHash: await passwords.hash(password), roles: ['ADMIN'], createdAt: new Date() });
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
