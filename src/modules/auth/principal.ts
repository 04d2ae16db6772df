import type { Role } from './user.entity.js';

/** The authenticated caller of an operation. */
export interface Principal {
  userName: string;
  roles: Role[];
  /** the groups it is a member of (ACL principals `group:<name>`) */
  groups?: string[];
}

