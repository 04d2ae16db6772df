/** The access capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { authorize, authorizeAtRoot, checkState, visibleEntries } from './policy.js';
export type { AccessScope, EntryAction } from './policy.js';
export { mayAdminister, requireRole } from './roles.js';
export { AclCache } from './acl.js';
export type { Permission, ReadableAcls } from './acl.js';
export { AclResolver, EntryAclResolver, RepositoryAclResolver } from './acl.resolver.js';
export { changeEntryAcl, changeRootAcl, entryAcl, entryPermissions, rootAcl } from './acl-operations.js';
export { aclInputSchema, rootAclInputSchema } from './acl-operations.js';
export type { AclView } from './acl-operations.js';
