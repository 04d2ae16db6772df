import type { Role } from './user.entity.js';

/** The authenticated caller of an operation. */
export interface Principal {
  userName: string;
  roles: Role[];
}

export const isAdmin = (principal: Principal) => principal.roles.includes('ADMIN');
