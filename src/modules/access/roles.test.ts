import { describe, expect, it } from 'vitest';
import { mayAdminister, requireRole } from './roles.js';

/*
 * The role rule alone; the layers that ask it (REST's administration domain, GraphQL's
 * `@Authorized('ADMIN')`, reindexing, the jobs list) keep their tests over HTTP (test/rest/session-source,
 * src/modules/auth, fulltext and conversion tests).
 */
describe('the role rule', () => {
  const user = { userName: 'alice', roles: ['USER' as const], groups: [] };
  const admin = { userName: 'root', roles: ['ADMIN' as const], groups: [] };
  const both = { userName: 'boss', roles: ['USER' as const, 'ADMIN' as const], groups: [] };

  it('an administrator is whoever has the role ADMIN', () => {
    expect([user, admin, both].map(mayAdminister)).toEqual([false, true, true]);
  });

  it('refuses a caller without the role with a 403 accessDenied that names what needs it', () => {
    expect(() => requireRole(user, 'ADMIN', 'reindexing a repository')).toThrow(
      expect.objectContaining({ reasonCode: 'accessDenied', status: 403, message: 'reindexing a repository needs the role ADMIN' }),
    );
    expect(() => requireRole(user, ['ADMIN'])).toThrow('this operation needs the role ADMIN');
    expect(() => requireRole(admin, 'ADMIN')).not.toThrow();
    expect(() => requireRole(user, ['ADMIN', 'USER'])).not.toThrow();
    expect(() => requireRole({ userName: 'nobody', roles: [], groups: [] }, ['ADMIN', 'USER'])).toThrow('this operation needs the role ADMIN or USER');
  });
});
