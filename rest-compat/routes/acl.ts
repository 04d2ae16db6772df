import { z } from 'zod';
import { readJsonObject } from '../../src/http/body.js';
import { EntryAclDocument, EntryPermissionsDocument, RepositoryAclDocument, SetEntryAclDocument, SetRepositoryAclDocument } from '../operations/documents.generated.js';
import { byId, nonEmptyText, parse } from '../params.js';
import { adminDomain, contentDomain, route, type RestRoute } from '../route.js';

/** The ACL type of DESIGN §10's answers. */
const aclType = 'svc.model.content.Acl';
type EffectiveEntry = { principal: string; permission: string; inheritedFrom?: string | null };
/** The answer of DESIGN §10: `inheritedFrom` only where a permission is inherited. */
const aclReply = ({ result }: { result: { entries: unknown[]; inherit?: boolean; effective?: EffectiveEntry[] } }) => ({
  body: { _type: aclType, ...result, ...(result.effective && { effective: result.effective.map(({ inheritedFrom, ...entry }) => (inheritedFrom ? { ...entry, inheritedFrom } : entry)) }) },
});
const byRepositoryId = z.object({ repositoryId: nonEmptyText });

/** `…/content/{id}/acl` and `…/folder/{id}/acl`, `…/permissions`: the same verbs on either kind (a folder's id on the content path is a 404). */
const entryAclRoutes = (segment: 'content' | 'folder', entryType: 'CONTENT' | 'FOLDER'): RestRoute[] => [
  route({
    method: 'GET',
    path: `${contentDomain}/${segment}/:id/acl`,
    document: EntryAclDocument,
    input: byId,
    variables: (input) => ({ ...input, entryType }),
    reply: aclReply,
  }),
  route({
    method: 'PUT',
    path: `${contentDomain}/${segment}/:id/acl`,
    document: SetEntryAclDocument,
    input: async (ctx, params, { inputs }) => ({ ...byId(ctx, params), input: inputs.fromJson('AclInput', await readJsonObject(ctx)) }),
    variables: (input) => ({ ...input, entryType }),
    reply: aclReply,
  }),
  route({
    method: 'GET',
    path: `${contentDomain}/${segment}/:id/permissions`,
    document: EntryPermissionsDocument,
    input: byId,
    variables: (input) => ({ ...input, entryType }),
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
    document: RepositoryAclDocument,
    input: (ctx) => parse(byRepositoryId, ctx.query),
    variables: (input) => input,
    reply: aclReply,
  }),
  route({
    method: 'PUT',
    path: `${adminDomain}/repository/acl`,
    document: SetRepositoryAclDocument,
    input: async (ctx, _params, { inputs }) => ({ ...parse(byRepositoryId, ctx.query), input: inputs.fromJson('RepositoryAclInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: aclReply,
  }),
];
