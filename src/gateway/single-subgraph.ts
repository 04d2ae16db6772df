import type {
  ConstDirectiveNode,
  GraphQLAbstractType,
  DocumentNode,
  FragmentDefinitionNode,
  GraphQLField,
  GraphQLObjectType,
  GraphQLSchema,
  SelectionSetNode,
} from 'graphql';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { ExecutionRequest } from '@graphql-tools/utils';
import { buildASTSchema, getNamedType, getOperationAST, getVariableValues, GraphQLError, isAbstractType, isObjectType, Kind, parse, print, validate } from 'graphql';
import { forwardedHeaders, inProcessExecutor, type InProcessSubgraph } from './transport.js';

/**
 * Single-subgraph plans, cached per document. When every field an operation selects can be resolved
 * by one subgraph that runs in-process — a query or mutation that never leaves that subgraph, which
 * is what most REST operations are — the planner would send that subgraph a copy of the operation and
 * pass its answer through. This does it directly: the client's (already parsed and validated)
 * document executes against the subgraph schema, skipping per-request delegation planning and the
 * gateway's proxying resolvers.
 *
 * Which subgraph resolves a field is read from the supergraph's `@join__type` / `@join__field`
 * directives. An operation is only eligible when it is unambiguous: an interface or union selection
 * only when that subgraph owns the abstract type and the selection holds for every possible type
 * there (the REST documents select `Entry`), no introspection, and no field that is `@external`, `@requires`,
 * progressively overridden, or typed differently in that subgraph (shareable fields of different
 * nullability); the document must also validate against the subgraph schema. Anything else, and every
 * subscription, goes through the regular planner. The decision is memoized per parsed document,
 * and parsed documents are themselves cached by the runtime, so it is made once per distinct operation.
 */
export class SingleSubgraphPlanner {
  readonly #schema: GraphQLSchema;
  readonly #graphNames = new Map<string, string>(); // join__Graph enum value → subgraph name
  readonly #resolvers = new Map<string, ReadonlySet<string>>(); // "Type.field" → subgraph names
  readonly #subgraphs: ReadonlyMap<string, GraphQLSchema>;
  readonly #plans = new WeakMap<DocumentNode, Map<string, string | null>>();

  /** `subgraphs`: in-process subgraph name (lower case) → its schema (only these can be shortcut targets) */
  constructor(supergraphSdl: string, subgraphs: ReadonlyMap<string, GraphQLSchema>) {
    this.#subgraphs = subgraphs;
    const ast = parse(supergraphSdl, { noLocation: true });
    this.#schema = buildASTSchema(ast, { assumeValid: true, assumeValidSDL: true });
    const graphEnum = this.#schema.getType('join__Graph');
    for (const value of graphEnum && 'getValues' in graphEnum ? graphEnum.getValues() : []) {
      const name = stringArg(value.astNode?.directives?.find((d) => d.name.value === 'join__graph'), 'name');
      if (name) this.#graphNames.set(value.name, name.toLowerCase());
    }
  }

  /** The in-process subgraph that can run this operation alone, or undefined (use the planner). */
  plan(document: DocumentNode, operationName?: string | null): string | undefined {
    let byOperation = this.#plans.get(document);
    if (!byOperation) {
      byOperation = new Map();
      this.#plans.set(document, byOperation);
    }
    const key = operationName ?? '';
    let plan = byOperation.get(key);
    if (plan === undefined) {
      plan = this.#decide(document, operationName) ?? null;
      byOperation.set(key, plan);
    }
    return plan ?? undefined;
  }

  #decide(document: DocumentNode, operationName?: string | null): string | undefined {
    const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    if (operations.length !== 1) return undefined; // keep it simple: one operation per document
    const operation = getOperationAST(document, operationName);
    if (!operation || (operation.operation !== 'query' && operation.operation !== 'mutation')) return undefined;
    const root = operation.operation === 'query' ? this.#schema.getQueryType() : this.#schema.getMutationType();
    if (!root) return undefined;
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

    let candidates: Set<string> | undefined;
    const restrictTo = (graphs: ReadonlySet<string>) => {
      candidates = new Set([...(candidates ?? graphs)].filter((g) => graphs.has(g)));
      return candidates.size > 0;
    };
    const visiting = new Set<string>();
    /** a type condition selects on `type` when it names it, an interface it implements, or a union holding it */
    const appliesTo = (condition: string, type: GraphQLObjectType) => {
      if (condition === type.name) return true;
      const named = this.#schema.getType(condition);
      return !!named && isAbstractType(named) && this.#schema.isSubType(named, type);
    };
    const walk = (set: SelectionSetNode, type: GraphQLObjectType): boolean => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          const name = selection.name.value;
          if (name === '__typename') continue;
          if (name.startsWith('__')) return false; // introspection answers from the supergraph
          const field = type.getFields()[name];
          if (!field || !restrictTo(this.#resolversOf(type, field))) return false;
          if (selection.selectionSet) {
            const child = getNamedType(field.type);
            if (isObjectType(child)) {
              if (!walk(selection.selectionSet, child)) return false;
            } else if (isAbstractType(child)) {
              if (!restrictTo(this.#ownersOf(child))) return false;
              // what the selection asks of each type the abstract one can resolve to
              for (const possible of this.#schema.getPossibleTypes(child)) if (!walk(selection.selectionSet, possible)) return false;
            } else {
              return false;
            }
          }
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          // a fragment for another type selects nothing on this one
          if (selection.typeCondition && !appliesTo(selection.typeCondition.name.value, type)) continue;
          if (!walk(selection.selectionSet, type)) return false;
        } else {
          const fragment = fragments.get(selection.name.value);
          if (!fragment || visiting.has(fragment.name.value)) return false;
          if (!appliesTo(fragment.typeCondition.name.value, type)) continue;
          visiting.add(fragment.name.value);
          const ok = walk(fragment.selectionSet, type);
          visiting.delete(fragment.name.value);
          if (!ok) return false;
        }
      }
      return true;
    };
    if (!walk(operation.selectionSet, root) || !candidates) return undefined;
    for (const name of candidates) {
      const schema = this.#subgraphs.get(name);
      if (schema && validate(schema, document).length === 0) return name;
    }
    return undefined;
  }

  /** The subgraphs that define an interface or union (and so resolve its runtime type) themselves. */
  #ownersOf(type: GraphQLAbstractType): ReadonlySet<string> {
    const owners = new Set<string>();
    for (const joinType of type.astNode?.directives?.filter((d) => d.name.value === 'join__type') ?? []) {
      if (boolArg(joinType, 'isInterfaceObject')) continue;
      const graph = this.#graphNames.get(enumArg(joinType, 'graph') ?? '');
      if (graph) owners.add(graph);
    }
    // every possible type must live there too, or the subgraph could not produce it
    for (const possible of this.#schema.getPossibleTypes(type)) {
      const graphs = new Set<string>();
      for (const joinType of possible.astNode?.directives?.filter((d) => d.name.value === 'join__type') ?? []) {
        const graph = this.#graphNames.get(enumArg(joinType, 'graph') ?? '');
        if (graph) graphs.add(graph);
      }
      for (const graph of owners) if (!graphs.has(graph)) owners.delete(graph);
    }
    return owners;
  }

  /** The subgraphs that resolve `type.field` themselves (see the class comment for what is excluded). */
  #resolversOf(type: GraphQLObjectType, field: GraphQLField<unknown, unknown>): ReadonlySet<string> {
    const key = `${type.name}.${field.name}`;
    let resolvers = this.#resolvers.get(key);
    if (resolvers) return resolvers;
    const result = new Set<string>();
    const joinFields = field.astNode?.directives?.filter((d) => d.name.value === 'join__field') ?? [];
    if (joinFields.length === 0) {
      for (const joinType of type.astNode?.directives?.filter((d) => d.name.value === 'join__type') ?? []) {
        if (boolArg(joinType, 'isInterfaceObject')) continue;
        const graph = this.#graphNames.get(enumArg(joinType, 'graph') ?? '');
        if (graph) result.add(graph);
      }
    } else {
      const fieldType = print(field.astNode!.type);
      let usable = true;
      for (const joinField of joinFields) {
        if (stringArg(joinField, 'overrideLabel')) usable = false; // progressive override: depends on the request
      }
      for (const joinField of usable ? joinFields : []) {
        const graph = this.#graphNames.get(enumArg(joinField, 'graph') ?? '');
        if (!graph) continue;
        if (boolArg(joinField, 'external') || boolArg(joinField, 'usedOverridden') || stringArg(joinField, 'requires')) continue;
        const typeInGraph = stringArg(joinField, 'type');
        if (typeInGraph && typeInGraph !== fieldType) continue;
        result.add(graph);
      }
    }
    resolvers = result;
    this.#resolvers.set(key, resolvers);
    return resolvers;
  }
}

function argOf(directive: ConstDirectiveNode | undefined, name: string) {
  return directive?.arguments?.find((a) => a.name.value === name)?.value;
}
function stringArg(directive: ConstDirectiveNode | undefined, name: string): string | undefined {
  const value = argOf(directive, name);
  return value?.kind === Kind.STRING ? value.value : undefined;
}
function enumArg(directive: ConstDirectiveNode | undefined, name: string): string | undefined {
  const value = argOf(directive, name);
  return value?.kind === Kind.ENUM ? value.value : undefined;
}
function boolArg(directive: ConstDirectiveNode | undefined, name: string): boolean {
  const value = argOf(directive, name);
  return value?.kind === Kind.BOOLEAN && value.value;
}

interface ShortcutLogger {
  error(obj: object, msg?: string): void;
}

/**
 * Embedded mode: an operation that one in-process subgraph resolves entirely runs directly against
 * that subgraph (SingleSubgraphPlanner), skipping the runtime's planning and delegation. Off with
 * GATEWAY_SINGLE_SUBGRAPH_SHORTCUT=false; its gain is in docs/benchmarks.md.
 *
 * A documented exception to "every subgraph call runs Hive's subgraph hooks": the call does not go
 * through the runtime's executor, so `onSubgraphExecute` / `onFetch` plugins (upstreamTimeout,
 * propagateHeaders, demand control, telemetry) do not see it. What they provide here is done the
 * same way (the test "the shortcut forwards the headers and keeps the bounds …" holds it): the
 * headers `propagateHeaders` would forward are forwarded, the bounds are checked before execution
 * (useOperationLimits), and there is no upstream to time out. A plugin that must see every subgraph
 * call needs the switch off.
 */
export function useSingleSubgraphShortcut(options: { supergraphSdl: string; subgraphs: readonly InProcessSubgraph[]; logger: ShortcutLogger }): GatewayPlugin {
  const subgraphs = new Map(options.subgraphs.map((s) => [s.name.toLowerCase(), s]));
  const planner = new SingleSubgraphPlanner(options.supergraphSdl, new Map([...subgraphs].map(([name, s]) => [name, s.schema])));
  const executors = new Map([...subgraphs].map(([name, s]) => [name, inProcessExecutor(s, options.logger)]));
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const target = planner.plan(args.document, args.operationName);
      const executor = target === undefined ? undefined : executors.get(target);
      if (!target || !executor) return;
      const variableDefinitions = getOperationAST(args.document, args.operationName)?.variableDefinitions ?? [];
      setExecuteFn(async (execArgs) => {
        // variables the supergraph rejects: the planner's path reports them exactly as for any operation
        if (getVariableValues(execArgs.schema, variableDefinitions, execArgs.variableValues ?? {}).errors) return executeFn(execArgs);
        const context: unknown = execArgs.contextValue;
        const request: ExecutionRequest = {
          document: execArgs.document,
          variables: execArgs.variableValues ?? undefined,
          operationName: execArgs.operationName ?? undefined,
          context,
          extensions: { headers: forwardedHeaders(requestHeadersOf(context)) },
        };
        const result = await executor(request);
        // in-process graphql 16 never streams a query or mutation; running it again through the planner could repeat a mutation
        if (Symbol.asyncIterator in result) return { errors: [new GraphQLError('Incremental delivery (@defer/@stream) is not supported.', { extensions: { reasonCode: 'illegalArguments', status: 400 } })] };
        // as the runtime's subgraph error handling does for planned operations
        for (const error of result.errors ?? []) {
          const extensions = error.extensions as Record<string, unknown>;
          extensions['code'] ??= 'DOWNSTREAM_SERVICE_ERROR';
          extensions['serviceName'] ??= target;
        }
        return result;
      });
    },
  };
}

/** The client request's headers from a gateway context (every path into the runtime gives one `request`: yoga's own WHATWG implementation or Node's). */
function requestHeadersOf(context: unknown): Headers {
  const request = typeof context === 'object' && context !== null && 'request' in context ? context.request : undefined;
  const headers = typeof request === 'object' && request !== null && 'headers' in request ? request.headers : undefined;
  return headers instanceof Headers ? headers : new Headers(isHeaderList(headers) ? [...headers] : undefined);
}

const isHeaderList = (value: unknown): value is Iterable<[string, string]> => typeof value === 'object' && value !== null && Symbol.iterator in value;
