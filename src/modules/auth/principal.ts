import type { Role } from './user.entity.js';

/** The authenticated caller of an operation. */
export interface Principal {
  userName: string;
  roles: Role[];
  /** the groups the user is a member of, by name as stored (`group:<name>` principals of ACLs), sorted whatever their case */
  groups: string[];
}

