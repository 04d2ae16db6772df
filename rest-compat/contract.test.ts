import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generate, loadContext } from '@graphql-codegen/cli';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import type { CheckInMutationVariables, GetContentQuery, SearchByPropertiesQueryVariables } from './operations/documents.generated.js';
import { GetContentDocument } from './operations/documents.generated.js';
import { route } from './route.js';
import { byId } from './routes/results.js';

/*
 * The REST↔GraphQL contract is checked when the project compiles, not when a request runs:
 * - `npm run build` regenerates operations/documents.generated.ts from operations/*.graphql against
 *   schema/supergraph.graphql (codegen.yml); a document that selects a field or passes a variable the
 *   schema does not have fails that step (tested below);
 * - the routes use the generated types, so a result or variable whose type changed fails `tsc`. The
 *   lines marked @ts-expect-error below are compiled with every build: were the types loose (any,
 *   unknown), the expected errors would vanish and tsc would fail on the unused directives.
 */

// @ts-expect-error: check-in has no variable `force`
export const unknownVariable: CheckInMutationVariables = { repository: 'r', id: 'i', force: true };
// @ts-expect-error: `major` is a Boolean
export const wrongVariableType: CheckInMutationVariables = { repository: 'r', id: 'i', input: { major: 'yes' } };
// @ts-expect-error: versionStatus is an enum of the schema
export const unknownEnumValue: SearchByPropertiesQueryVariables = { repository: 'r', filter: { versionStatus: 'OLD' } };
// @ts-expect-error: the document does not select `secret`
export const unselectedField = (data: GetContentQuery) => data.result.secret;

export const routeReadingAnUnselectedField = route({
  method: 'GET',
  path: '/typed',
  summary: 'typed',
  responses: {},
  document: GetContentDocument,
  variables: byId,
  // @ts-expect-error: a reply may read only what GetContent selects (a content has no `children`)
  reply: ({ result }) => ({ body: result.__typename === 'Content' ? result.children : undefined }),
});

export const routeWithWrongVariables = route({
  method: 'GET',
  path: '/typed',
  summary: 'typed',
  responses: {},
  document: GetContentDocument,
  // @ts-expect-error: GetContent needs `repository` and `id`, as strings
  variables: ({ params }) => ({ id: Number(params.id) }),
  reply: () => ({}),
});

/** codegen.yml, as `npm run build` runs it */
async function codegenConfig() {
  const context = await loadContext(path.join(projectRoot, 'codegen.yml'));
  return { ...context.getConfig(), cwd: projectRoot, silent: true };
}

const supergraph = () => readFileSync(path.join(projectRoot, 'schema', 'supergraph.graphql'), 'utf8');

describe('the typed REST↔GraphQL contract', () => {
  it('the checked-in documents.generated.ts is what the documents and the schema generate', async () => {
    const [output] = await generate(await codegenConfig(), false);
    const checkedIn = readFileSync(path.join(projectRoot, 'rest-compat', 'operations', 'documents.generated.ts'), 'utf8');
    expect(output!.content).toBe(checkedIn);
  });

  it('a document selecting a field the schema no longer has fails generation (so the build), naming the field', async () => {
    // Content.comment is selected by the shared ContentFields fragment
    const drifted = supergraph().replace('  """check-in comment"""\n  comment: String\n', '');
    expect(drifted).not.toBe(supergraph());
    await expect(generate({ ...(await codegenConfig()), schema: drifted }, false)).rejects.toThrow(/comment/);
  });

  it('a variable whose input type the schema no longer has fails generation', async () => {
    const drifted = supergraph().replace(/\binput CheckInInput\b/, 'input CheckInArguments').replace(/input: CheckInInput,/, 'input: CheckInArguments,');
    expect(drifted).not.toBe(supergraph());
    await expect(generate({ ...(await codegenConfig()), schema: drifted }, false)).rejects.toThrow(/CheckInInput/);
  });
});
