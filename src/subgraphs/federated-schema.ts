import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { Kind, parse, type DefinitionNode, type DocumentNode, type GraphQLSchema } from 'graphql';
import { buildSchema, createResolversMap, getMetadataStorage, type AuthChecker, type NonEmptyArray } from 'type-graphql';
import type { RequestContext } from '../context.js';
import { graphqlErrorOf, mapDomainErrors } from '../graphql/errors.js';
import { pubSub } from '../graphql/pubsub.js';
import { requireRole } from '../modules/access/index.js';
import type { Role } from '../modules/auth/index.js';

/**
 * `@Authorized()` needs a session; `@Authorized('ADMIN')` needs that role too (403 otherwise). It runs
 * before the global middlewares, so it maps its own errors.
 */
const authChecker: AuthChecker<RequestContext> = async ({ context }, roles) => {
  try {
    const principal = await context.principal();
    // the decorators name roles as strings (`@Authorized('ADMIN')`)
    if (roles.length > 0) requireRole(principal, roles as Role[]);
    return true;
  } catch (error) {
    throw graphqlErrorOf(error);
  }
};

export interface FederatedSchema {
  schema: GraphQLSchema;
  /** the subgraph SDL as composition sees it */
  sdl: string;
}

const nameOf = (node: DefinitionNode | { name?: { value: string } }) => ('name' in node && node.name ? node.name.value : '');

/**
 * Types and fields by name: type-graphql orders them by module import order, which must not change
 * the SDL (schema/ is checked in). Sorted on the AST, so no second copy of graphql's classes is involved.
 */
function sortedDocument(document: DocumentNode): DocumentNode {
  const byName = <T extends { name?: { value: string } }>(nodes: readonly T[] | undefined) =>
    nodes ? [...nodes].sort((a, b) => nameOf(a).localeCompare(nameOf(b))) : nodes;
  const definitions = [...document.definitions]
    .map((definition) => ('fields' in definition && definition.fields ? { ...definition, fields: byName(definition.fields as never) } : definition))
    .sort((a, b) => `${a.kind}:${nameOf(a)}`.localeCompare(`${b.kind}:${nameOf(b)}`)) as DefinitionNode[];
  return { ...document, definitions };
}

/**
 * Descriptions of the root types, which TypeGraphQL's decorators cannot give: the same in every
 * subgraph, so the supergraph composes one of them.
 */
const rootTypeDescriptions: Record<string, string> = {
  Query: 'the reads of the API: content, administration and health',
  Mutation: 'the changes of the API: content, administration and health checks',
  Subscription: 'live updates over graphql-ws or SSE; each ends with its session',
};

function withRootTypeDescriptions(document: DocumentNode): DocumentNode {
  const definitions = document.definitions.map((definition) =>
    definition.kind === Kind.OBJECT_TYPE_DEFINITION && !definition.description && rootTypeDescriptions[definition.name.value]
      ? { ...definition, description: { kind: Kind.STRING, value: rootTypeDescriptions[definition.name.value]! } }
      : definition,
  ) as DefinitionNode[];
  return { ...document, definitions };
}

/**
 * TypeGraphQL builds the schema; it is printed with its directives (type-graphql's own printer drops
 * `@key`) and rebuilt as a Federation 2 subgraph.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export async function buildFederatedSchema(resolvers: NonEmptyArray<Function>, orphanedTypes: Function[] = []): Promise<FederatedSchema> {
  const schema = await buildSchema({ resolvers, orphanedTypes, authChecker, validate: false, pubSub, globalMiddlewares: [mapDomainErrors] });
  const typeDefs = withRootTypeDescriptions(
    sortedDocument(parse(`extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable"])\n${printSchemaWithDirectives(schema)}`)),
  );
  const resolverMap = createResolversMap(schema) as Record<string, Record<string, unknown> | undefined>;
  // type-graphql wraps each interface's `resolveType` in an async function, which graphql-jit cannot
  // compile (src/gateway/compiled-execution.ts): the subgraph takes the interfaces' own functions, which
  // here return a type name at once (Entry: entryTypeName)
  for (const { name, resolveType } of getMetadataStorage().interfaceTypes) {
    const typeResolvers = resolverMap[name];
    if (resolveType && typeResolvers) typeResolvers['__resolveType'] = resolveType;
  }
  const subgraph = buildSubgraphSchema([{ typeDefs, resolvers: resolverMap as never }]);
  return { schema: subgraph, sdl: printSubgraphSchema(subgraph) };
}
