import type { Context } from 'koa';
import { z } from 'zod';
import { illegalArguments } from '../../src/errors.js';
import { readForm, readJsonObject } from '../../src/http/body.js';
import { readMultipart } from '../../src/http/multipart.js';
import {
  AssignPolicyDocument,
  ContentTypesDocument,
  CreateContentTypeDocument,
  CreateDefaultTypePolicyDocument,
  CreateInheritancePolicyDocument,
  CreateTypeRestrictionPolicyDocument,
  DeletePoliciesDocument,
  PoliciesDocument,
  UnassignPolicyDocument,
} from '../operations/documents.generated.js';
import type { TextSource } from '../inputs.js';
import { list, nonEmptyText, parse } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';
import { createdRecordReply, noContentReply, recordReply } from './results.js';

/**
 * The form fields of a policy creation, form-encoded or multipart (spec endpoints 6–8), with the
 * spec's other spellings taken as the names the GraphQL inputs use: `defaultType` for
 * `defaultTypeName`, `restrictedTypeNames` for `deniedTypeNames`.
 */
async function policyForm(ctx: Context): Promise<TextSource> {
  const fields: TextSource = ctx.request.is('multipart/form-data')
    ? (
        await readMultipart(ctx, {
          receive: async () => {
            throw illegalArguments('a policy form has no file part');
          },
          discard: async () => undefined,
        })
      ).fields
    : await readForm(ctx);
  for (const [alias, name] of [
    ['defaultType', 'defaultTypeName'],
    ['restrictedTypeNames', 'deniedTypeNames'],
  ] as const) {
    if (fields[alias] === undefined) continue;
    if (fields[name] !== undefined) throw illegalArguments(`form fields ${alias} and ${name} name the same thing: give one`);
    fields[name] = fields[alias];
    delete fields[alias];
  }
  return fields;
}

const jobReply = ({ result }: { result: { deleted: number; duration: number } }) => ({
  body: { _type: 'svc.model.content.service.v1.request.async.status.AsyncJobResponse', state: 'Done', duration: result.duration, deleted: result.deleted },
});
const assignment = z.object({ policyId: nonEmptyText, repositoryId: nonEmptyText, folderId: nonEmptyText });

/** Policies (spec endpoints 6–9), their assignment to folders and the type registry (DESIGN §4). */
export const policyRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${adminDomain}/policy/default-type`,
    document: CreateDefaultTypePolicyDocument,
    input: async (ctx, _params, { inputs }) => ({ input: inputs.fromText('CreateDefaultTypePolicyInput', await policyForm(ctx), 'form field') }),
    variables: (input) => input,
    reply: createdRecordReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/policy/inheritance`,
    document: CreateInheritancePolicyDocument,
    input: async (ctx, _params, { inputs }) => ({ input: inputs.fromText('CreateInheritancePolicyInput', await policyForm(ctx), 'form field') }),
    variables: (input) => input,
    reply: createdRecordReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/policy/type-restriction`,
    document: CreateTypeRestrictionPolicyDocument,
    input: async (ctx, _params, { inputs }) => ({ input: inputs.fromText('CreateTypeRestrictionPolicyInput', await policyForm(ctx), 'form field') }),
    variables: (input) => input,
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/policies`,
    document: PoliciesDocument,
    input: () => ({}),
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policies`,
    document: DeletePoliciesDocument,
    input: (ctx) => ({ ids: parse(z.object({ policyIds: list }), ctx.query).policyIds }),
    variables: (input) => input,
    reply: jobReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policies/by-technical-names`,
    document: DeletePoliciesDocument,
    // absent or empty: every custom policy
    input: (ctx) => ({ technicalNames: (parse(z.object({ technicalNames: list.optional() }), ctx.query).technicalNames ?? []).filter((name) => name !== '') }),
    variables: (input) => input,
    reply: jobReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policy`,
    document: DeletePoliciesDocument,
    input: (ctx) => ({ ids: [parse(z.object({ policyId: nonEmptyText }), ctx.query).policyId] }),
    variables: (input) => input,
    reply: jobReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policy/by-technical-name`,
    document: DeletePoliciesDocument,
    input: (ctx) => ({ technicalNames: [parse(z.object({ technicalName: nonEmptyText }), ctx.query).technicalName] }),
    variables: (input) => input,
    reply: jobReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/policy/assignment`,
    document: AssignPolicyDocument,
    input: (ctx) => parse(assignment, ctx.query),
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policy/assignment`,
    document: UnassignPolicyDocument,
    input: (ctx) => parse(assignment, ctx.query),
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/type`,
    document: CreateContentTypeDocument,
    input: async (ctx, _params, { inputs }) => ({ input: inputs.fromJson('CreateContentTypeInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/types`,
    document: ContentTypesDocument,
    input: () => ({}),
    variables: () => ({}),
    reply: recordReply,
  }),
];
