import { accessDenied } from '../../errors.js';
import type { Principal } from '../auth/principal.js';
import type { Role } from '../auth/user.entity.js';

/*
 * The role rule of the service, asked by every layer that decides by role (the REST layer's
 * administration domain, GraphQL's `@Authorized('ADMIN')`, the operations): an administrator (ADMIN)
 * administers users, repositories, policies and checks, reindexes, and sees every job. The rules on
 * one entry or job are in policy.ts.
 */

const hasOneOf = (principal: Principal, roles: readonly Role[]) => roles.some((role) => principal.roles.includes(role));

/** Whether the caller is an administrator. */
export const mayAdminister = (principal: Principal): boolean => hasOneOf(principal, ['ADMIN']);

/** A 403 (accessDenied) unless the caller has `role` (or one of them); `what` names what needs it in the message. */
export function requireRole(principal: Principal, role: Role | readonly Role[], what = 'this operation'): void {
  const roles: readonly Role[] = typeof role === 'string' ? [role] : role;
  if (!hasOneOf(principal, roles)) throw accessDenied(`${what} needs the role ${roles.join(' or ')}`);
}
