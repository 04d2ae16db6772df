import { aclInputSchema, rootAclInputSchema } from '../../src/modules/access/index.js';
import { EntryAclDocument, EntryPermissionsDocument, RepositoryAclDocument, SetEntryAclDocument, SetRepositoryAclDocument } from '../operations/documents.generated.js';
import { aclSchema, permissionsSchema } from '../shapes/schemas.js';
import { byRepositoryId } from './admin.js';
import { byId } from './results.js';
import { adminDomain, contentDomain, route, type RestRoute } from '../route.js';

/** The ACL type of DESIGN §10's answers. */
const aclType = 'svc.model.content.Acl';
type EffectiveEntry = { principal: string; permission: string; inheritedFrom?: string | null };
/** The answer of DESIGN §10: `inheritedFrom` only where a permission is inherited. */
const aclReply = ({ result }: { result: { entries: unknown[]; inherit?: boolean; effective?: EffectiveEntry[] } }) => ({
  body: { _type: aclType, ...result, ...(result.effective && { effective: result.effective.map(({ inheritedFrom, ...entry }) => (inheritedFrom ? { ...entry, inheritedFrom } : entry)) }) },
});

/** `…/content/{id}/acl` and `…/folder/{id}/acl`, `…/permissions`: the same verbs on either kind (a folder's id on the content path is a 404). */
const entryAclRoutes = (segment: 'content' | 'folder', entryType: 'CONTENT' | 'FOLDER'): RestRoute[] => [
  route({
    method: 'GET',
    path: `${contentDomain}/${segment}/:id/acl`,
    summary: `The ACL of a ${segment}: its own entries, inherit, and the effective permissions`,
    responses: { 200: aclSchema },
    document: EntryAclDocument,
    variables: (request) => ({ ...byId(request), entryType }),
    reply: aclReply,
  }),
  route({
    method: 'PUT',
    path: `${contentDomain}/${segment}/:id/acl`,
    summary: `Replace the ACL of a ${segment}`,
    request: () => ({ body: { kind: 'json', schema: aclInputSchema } as const }),
    responses: { 200: aclSchema },
    document: SetEntryAclDocument,
    variables: (request) => ({ ...byId(request), entryType, input: request.body }),
    reply: aclReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/${segment}/:id/permissions`,
    summary: `What the caller may do on a ${segment}`,
    responses: { 200: permissionsSchema },
    document: EntryPermissionsDocument,
    variables: (request) => ({ ...byId(request), entryType }),
    reply: ({ result }) => ({ body: result }),
  }),
];

/** Access control lists (DESIGN §10): entries' own, and the repository root's (administrators). */
export const aclRoutes: RestRoute[] = [
  ...entryAclRoutes('content', 'CONTENT'),
  ...entryAclRoutes('folder', 'FOLDER'),
  route({
    method: 'GET',
    path: `${adminDomain}/repository/acl`,
    summary: "The ACL of a repository's root",
    request: () => ({ query: byRepositoryId }),
    responses: { 200: aclSchema },
    document: RepositoryAclDocument,
    variables: ({ query }) => query,
    reply: aclReply,
  }),
  route({
    method: 'PUT',
    path: `${adminDomain}/repository/acl`,
    summary: "Replace the ACL of a repository's root",
    request: () => ({ query: byRepositoryId, body: { kind: 'json', schema: rootAclInputSchema } as const }),
    responses: { 200: aclSchema },
    document: SetRepositoryAclDocument,
    variables: ({ query, body }) => ({ ...query, input: body }),
    reply: aclReply,
  }),
];
