/** The auth capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { createAuthServices } from './auth-services.js';
export type { AuthServices } from './auth-services.js';
export { AuthResolver, GroupsResolver, UsersResolver } from './auth.resolver.js';
export { addMember, createGroup, deleteGroup, forgetChangedMemberships, groupsOfUser, listGroups, membershipsChangedChannel, removeMember } from './groups.js';
export type { GroupRecord } from './groups.js';
export { ensureAdministrator, forgetEndedSession, missingSessionMessage, resolveSession, sessionEndedChannel, sessionTokenHash } from './operations.js';
export type { Principal } from './principal.js';
export type { Role } from './user.entity.js';
