import type { Role } from './user.entity.js';

/** The authenticated caller of an operation. */
export interface Principal {
  userName: string;
  roles: Role[];
  /** the groups the user is a member of, by name as stored (`group:<name>` principals of ACLs), sorted whatever their case */
  groups: string[];
}

/** The principal of every signed-in user in an access control list (DESIGN §10): no user or group is called so. */
export const everyone = 'EVERYONE';

/** A group as an ACL names it. */
export const groupPrincipal = (group: string) => `group:${group}`;

