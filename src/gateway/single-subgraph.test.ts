import { parse, type DocumentNode } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import * as restDocuments from '../../rest-compat/operations/documents.generated.js';
import { buildSubgraphs, composeSupergraph } from '../subgraphs/index.js';
import { SingleSubgraphPlanner } from './single-subgraph.js';

/** Which operations of the real supergraph skip the federation planner, and which must not. */
describe('single-subgraph plans over the real supergraph', () => {
  let planner: SingleSubgraphPlanner;
  beforeAll(async () => {
    const subgraphs = await buildSubgraphs();
    planner = new SingleSubgraphPlanner(
      composeSupergraph(subgraphs),
      new Map(Object.entries(subgraphs).map(([name, s]) => [name, s.schema])),
    );
  });
  const plan = (text: string) => planner.plan(parse(text));
  const healthDocuments = new Set(['ConnectionCheckDocument', 'DeepCheckDocument', 'StartDeepCheckDocument', 'DeepCheckReportDocument', 'AdministrationJobStatusDocument']);
  const adminDocuments = new Set(
    ['Authenticate', 'Logout', 'CreateRepository', 'Repositories', 'RepositoryByName', 'UpdateRepositoryLimits', 'DeleteRepository', 'RepositoryStatistics',
      'CreateUser', 'Users', 'DeleteUser', 'CreateGroup', 'Groups', 'DeleteGroup', 'AddGroupMember', 'RemoveGroupMember', 'RepositoryAcl', 'SetRepositoryAcl', 'CreateDefaultTypePolicy', 'CreateInheritancePolicy', 'CreateTypeRestrictionPolicy', 'Policies', 'DeletePolicies',
      'AssignPolicy', 'UnassignPolicy', 'ContentTypes', 'CreateContentType', 'Webhooks', 'RegisterWebhook', 'DeleteWebhook', 'EnableWebhook'].map((name) => `${name}Document`),
  );

  it('runs every REST document on the one subgraph it needs, interface selections included', () => {
    const documents = Object.entries(restDocuments).filter((entry): entry is [string, DocumentNode] => entry[0].endsWith('Document'));
    expect(documents.length).toBeGreaterThan(20);
    for (const [name, document] of documents) {
      const subgraph = planner.plan(document);
      expect({ name, subgraph }).toEqual({ name, subgraph: healthDocuments.has(name) ? 'health' : adminDocuments.has(name) ? 'admin' : 'content' });
    }
  });

  it('keeps fragments for other types of an interface out of the decision', () => {
    expect(plan('{ home(repository: "r") { entries { id ... on Folder { name } ... on Content { version resource { md5 } } } } }')).toBe('content');
  });

  it('leaves operations that span subgraphs, introspection and subscriptions to the planner', () => {
    expect(plan('{ me { userName } home(repository: "r") { count } }')).toBeUndefined();
    expect(plan('{ __schema { queryType { name } } }')).toBeUndefined();
    expect(plan('subscription { healthChanges { status } }')).toBeUndefined();
  });
});
