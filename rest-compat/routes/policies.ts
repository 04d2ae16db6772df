import { z } from 'zod';
import { illegalArguments } from '../../src/errors.js';
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
import { list, nonEmptyText } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';
import { contentTypeSchema, deletedPoliciesSchema, policySchema } from '../shapes/schemas.js';
import { createdRecordReply, noContentReply, recordReply } from './results.js';

/**
 * The spec's other spellings of policy form fields: `defaultType` for `defaultTypeName`,
 * `restrictedTypeNames` for `deniedTypeNames`. Either may be given, not both.
 */
function withoutAlias<T extends Record<string, unknown>, A extends keyof T, N extends keyof T>(fields: T, alias: A, name: N): Omit<T, A> {
  const { [alias]: aliased, ...rest } = fields;
  if (aliased === undefined) return rest;
  if ((rest as Record<string, unknown>)[name as string] !== undefined) throw illegalArguments(`form fields ${String(alias)} and ${String(name)} name the same thing: give one`);
  return { ...rest, [name]: aliased };
}

const jobReply = ({ result }: { result: { deleted: number; duration: number } }) => ({
  body: { _type: 'svc.model.content.service.v1.request.async.status.AsyncJobResponse', state: 'Done', duration: result.duration, deleted: result.deleted },
});
const assignment = z.object({ policyId: nonEmptyText, repositoryId: nonEmptyText, folderId: nonEmptyText });
const formDescription = 'Form fields: application/x-www-form-urlencoded or multipart/form-data (spec endpoints 6–8).';

/** Policies (spec endpoints 6–9), their assignment to folders and the type registry (DESIGN §4). */
export const policyRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${adminDomain}/policy/default-type`,
    summary: 'Create a default type policy (spec endpoint 6)',
    description: formDescription,
    request: (inputs) => {
      const fields = inputs.text('CreateDefaultTypePolicyInput');
      // the spec's name may stand for defaultTypeName: then it is not required by itself
      const schema = fields.extend({ defaultTypeName: fields.shape.defaultTypeName.optional(), defaultType: fields.shape.defaultTypeName.optional().meta({ description: 'the same as defaultTypeName' }) });
      return { body: { kind: 'form', schema } as const };
    },
    responses: { 201: policySchema },
    document: CreateDefaultTypePolicyDocument,
    variables: ({ body }) => {
      const input = withoutAlias(body, 'defaultType', 'defaultTypeName');
      if (input.defaultTypeName === undefined) throw illegalArguments('invalid form field: defaultTypeName is required');
      return { input: { ...input, defaultTypeName: input.defaultTypeName } };
    },
    reply: createdRecordReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/policy/inheritance`,
    summary: 'Create an inheritance policy (spec endpoint 7)',
    description: formDescription,
    request: (inputs) => ({ body: { kind: 'form', schema: inputs.text('CreateInheritancePolicyInput') } as const }),
    responses: { 201: policySchema },
    document: CreateInheritancePolicyDocument,
    variables: ({ body }) => ({ input: body }),
    reply: createdRecordReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/policy/type-restriction`,
    summary: 'Create a type restriction policy (spec endpoint 8)',
    description: formDescription,
    request: (inputs) => {
      const fields = inputs.text('CreateTypeRestrictionPolicyInput');
      return { body: { kind: 'form', schema: fields.extend({ restrictedTypeNames: fields.shape.deniedTypeNames.meta({ description: 'the same as deniedTypeNames' }) }) } as const };
    },
    responses: { 201: policySchema },
    document: CreateTypeRestrictionPolicyDocument,
    variables: ({ body }) => ({ input: withoutAlias(body, 'restrictedTypeNames', 'deniedTypeNames') }),
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/policies`,
    summary: 'The policies',
    responses: { 200: z.array(policySchema) },
    document: PoliciesDocument,
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policies`,
    summary: 'Delete policies by id (spec endpoint 9)',
    request: () => ({ query: z.object({ policyIds: list }) }),
    responses: { 200: deletedPoliciesSchema },
    document: DeletePoliciesDocument,
    variables: ({ query }) => ({ ids: query.policyIds }),
    reply: jobReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policies/by-technical-names`,
    summary: 'Delete policies by technical name; none given: every custom policy',
    request: () => ({ query: z.object({ technicalNames: list.optional() }) }),
    responses: { 200: deletedPoliciesSchema },
    document: DeletePoliciesDocument,
    // absent or empty: every custom policy
    variables: ({ query }) => ({ technicalNames: (query.technicalNames ?? []).filter((name) => name !== '') }),
    reply: jobReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policy`,
    summary: 'Delete a policy by id',
    request: () => ({ query: z.object({ policyId: nonEmptyText }) }),
    responses: { 200: deletedPoliciesSchema },
    document: DeletePoliciesDocument,
    variables: ({ query }) => ({ ids: [query.policyId] }),
    reply: jobReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policy/by-technical-name`,
    summary: 'Delete a policy by technical name',
    request: () => ({ query: z.object({ technicalName: nonEmptyText }) }),
    responses: { 200: deletedPoliciesSchema },
    document: DeletePoliciesDocument,
    variables: ({ query }) => ({ technicalNames: [query.technicalName] }),
    reply: jobReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/policy/assignment`,
    summary: 'Assign a policy to a folder',
    request: () => ({ query: assignment }),
    responses: { 204: null },
    document: AssignPolicyDocument,
    variables: ({ query }) => query,
    reply: noContentReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/policy/assignment`,
    summary: 'Take a policy off a folder',
    request: () => ({ query: assignment }),
    responses: { 204: null },
    document: UnassignPolicyDocument,
    variables: ({ query }) => query,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/type`,
    summary: 'Register a content type',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('CreateContentTypeInput') } as const }),
    responses: { 201: contentTypeSchema },
    document: CreateContentTypeDocument,
    variables: ({ body }) => ({ input: body }),
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/types`,
    summary: 'The content types',
    responses: { 200: z.array(contentTypeSchema) },
    document: ContentTypesDocument,
    variables: () => ({}),
    reply: recordReply,
  }),
];
