import { createRequire } from 'node:module';

/**
 * graphql-js exactly as Node resolves it for the gateway runtime, Apollo and @apollo/subgraph: the
 * CommonJS build (graphql 16 has no `exports` map, so Node's ESM `import 'graphql'` loads index.js too).
 * Vite/vitest would resolve a bare `import 'graphql'` in our code to the `module` build (index.mjs):
 * a second "realm" whose instanceof checks reject the runtime's schema ("Cannot use GraphQLSchema
 * from another module or realm"). Loading through require() gives one realm everywhere.
 */
const graphql = createRequire(import.meta.url)('graphql') as typeof import('graphql');

export const {
  buildASTSchema,
  execute,
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isAbstractType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  parse,
  print,
  subscribe,
  validate,
} = graphql;
export const GraphQLError = graphql.GraphQLError;
export type GraphQLError = import('graphql').GraphQLError;
export type Kind = import('graphql').Kind;
