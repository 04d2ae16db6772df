import type {
  FragmentDefinitionNode,
  GraphQLField,
  GraphQLNamedType,
  GraphQLSchema,
  SelectionSetNode,
  ValidationContext,
  ValidationRule,
} from 'graphql';
import { getNamedType, getNullableType, GraphQLError, isInterfaceType, isListType, isObjectType, Kind, parse } from './graphql.js';

/**
 * Bounds of one GraphQL operation (DESIGN §9). All counts are taken after fragment expansion: a
 * fragment spread N times counts N times, so fragments cannot hide amplification.
 */
export interface QueryLimits {
  /** deepest field nesting (a top-level field has depth 1; introspection subtrees are bounded separately) */
  maxDepth: number;
  /** number of aliased fields in the operation (stops alias amplification: `a1: health … a999: health`) */
  maxAliases: number;
  /**
   * Estimated cost: every field costs 1 (`__typename` 0), and the selections under a list-typed field
   * are multiplied by `listFactor`. So `{ items { id name } }` costs 1 + 2×listFactor.
   */
  maxCost: number;
  /** multiplier of a list field's sub-selection in the cost (default 10) */
  listFactor?: number;
  /** parser token limit: a document with more tokens is rejected before it is even parsed fully (default 10000) */
  maxTokens?: number;
  /** depth limit within `__schema` / `__type` subtrees (default 20; GraphiQL's introspection query needs 15). graphql-js' own MaxIntrospectionDepthRule also applies */
  maxIntrospectionDepth?: number;
}

interface OperationMeasure {
  depth: number;
  introspectionDepth: number;
  aliases: number;
  cost: number;
}

type LimitName = 'depth' | 'aliases' | 'cost' | 'tokens' | 'introspectionDepth';

/** The error a client gets when an operation exceeds a bound (HTTP 400, `illegalArguments` on the REST layer). */
function limitError(limit: LimitName, actual: number | undefined, max: number, message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code: 'GRAPHQL_VALIDATION_FAILED',
      reasonCode: 'illegalArguments',
      status: 400,
      limit,
      max,
      ...(actual === undefined ? {} : { actual }),
    },
  });
}

const ZERO: OperationMeasure = { depth: 0, introspectionDepth: 0, aliases: 0, cost: 0 };

/**
 * Measures every operation of a document. Linear in the document size: each fragment is measured
 * once (memoized) whatever the number of its spreads, so a "fragment bomb" cannot make this slow.
 */
function measureDocument(
  schema: GraphQLSchema,
  definitions: readonly { kind: Kind; selectionSet?: SelectionSetNode; operation?: string; name?: { value: string }; typeCondition?: { name: { value: string } } }[],
  listFactor = 10,
): OperationMeasure[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set((def as FragmentDefinitionNode).name.value, def as FragmentDefinitionNode);
  }
  const memo = new Map<string, OperationMeasure>();
  const visiting = new Set<string>();

  const fragmentMeasure = (name: string): OperationMeasure => {
    const cached = memo.get(name);
    if (cached) return cached;
    const fragment = fragments.get(name);
    if (!fragment || visiting.has(name)) return ZERO; // unknown or cyclic: other validation rules report it
    visiting.add(name);
    const type = schema.getType(fragment.typeCondition.name.value);
    const measure = measureSelectionSet(fragment.selectionSet, type, false);
    visiting.delete(name);
    memo.set(name, measure);
    return measure;
  };

  const fieldOf = (type: GraphQLNamedType | undefined | null, name: string): GraphQLField<unknown, unknown> | undefined => {
    if (type && (isObjectType(type) || isInterfaceType(type))) return type.getFields()[name];
    return undefined;
  };

  function measureSelectionSet(set: SelectionSetNode, parent: GraphQLNamedType | undefined | null, inIntrospection: boolean): OperationMeasure {
    let depth = 0;
    let introspectionDepth = 0;
    let aliases = 0;
    let cost = 0;
    for (const selection of set.selections) {
      let child: OperationMeasure;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (selection.alias) aliases += 1;
        if (name === '__typename') {
          depth = Math.max(depth, inIntrospection ? 0 : 1);
          continue;
        }
        const introspectionRoot = name === '__schema' || name === '__type';
        const field = introspectionRoot ? undefined : fieldOf(parent, name);
        const nested = inIntrospection || introspectionRoot;
        let sub: OperationMeasure = ZERO;
        let isList = false;
        if (selection.selectionSet) {
          let childType: GraphQLNamedType | undefined | null;
          if (introspectionRoot) {
            childType = schema.getType(name === '__schema' ? '__Schema' : '__Type');
          } else if (field) {
            childType = getNamedType(field.type);
            isList = isListType(getNullableType(field.type));
          } else {
            childType = undefined;
          }
          sub = measureSelectionSet(selection.selectionSet, childType, nested);
        }
        if (nested) {
          // introspection: bounded by its own depth limit; costs nothing against the data budget
          introspectionDepth = Math.max(introspectionDepth, 1 + sub.introspectionDepth);
          depth = Math.max(depth, inIntrospection ? 0 : 1);
          aliases += sub.aliases;
          continue;
        }
        child = {
          depth: 1 + sub.depth,
          introspectionDepth: sub.introspectionDepth,
          aliases: sub.aliases,
          cost: 1 + sub.cost * (isList ? listFactor : 1),
        };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        child = measureSelectionSet(selection.selectionSet, type, inIntrospection);
      } else {
        child = fragmentMeasure(selection.name.value);
        if (inIntrospection) child = { ...child, introspectionDepth: Math.max(child.introspectionDepth, child.depth), depth: 0, cost: 0 };
      }
      depth = Math.max(depth, child.depth);
      introspectionDepth = Math.max(introspectionDepth, child.introspectionDepth);
      aliases += child.aliases;
      cost += child.cost;
    }
    return { depth, introspectionDepth, aliases, cost };
  }

  const result: OperationMeasure[] = [];
  for (const def of definitions) {
    if (def.kind !== Kind.OPERATION_DEFINITION || !def.selectionSet) continue;
    const root =
      def.operation === 'mutation' ? schema.getMutationType() : def.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
    result.push(measureSelectionSet(def.selectionSet, root, false));
  }
  return result;
}

/** A validation rule enforcing depth, alias and cost bounds on every operation of the document. */
export function createLimitsRule(limits: QueryLimits): ValidationRule {
  const listFactor = limits.listFactor ?? 10;
  const maxIntrospectionDepth = limits.maxIntrospectionDepth ?? 20;
  return function QueryLimitsRule(context: ValidationContext) {
    return {
      Document: {
        leave(document) {
          for (const m of measureDocument(context.getSchema(), document.definitions as never, listFactor)) {
            if (m.depth > limits.maxDepth) {
              context.reportError(limitError('depth', m.depth, limits.maxDepth, `Query depth ${m.depth} exceeds the maximum depth of ${limits.maxDepth}.`));
            }
            if (m.introspectionDepth > maxIntrospectionDepth) {
              context.reportError(
                limitError(
                  'introspectionDepth',
                  m.introspectionDepth,
                  maxIntrospectionDepth,
                  `Introspection depth ${m.introspectionDepth} exceeds the maximum depth of ${maxIntrospectionDepth}.`,
                ),
              );
            }
            if (m.aliases > limits.maxAliases) {
              context.reportError(limitError('aliases', m.aliases, limits.maxAliases, `Query uses ${m.aliases} aliases; at most ${limits.maxAliases} are allowed.`));
            }
            if (m.cost > limits.maxCost) {
              context.reportError(limitError('cost', m.cost, limits.maxCost, `Query cost ${m.cost} exceeds the maximum cost of ${limits.maxCost}.`));
            }
          }
        },
      },
    };
  };
}

/** `parse` bounded by a token count (graphql-js aborts parsing past `maxTokens`). */
export function boundedParse(maxTokens: number): typeof parse {
  return (source, options) => {
    try {
      return parse(source, { ...options, maxTokens });
    } catch (error) {
      if (error instanceof Error && /Document contains more th\w+ \d+ tokens/.test(error.message)) {
        throw limitError('tokens', undefined, maxTokens, `Document exceeds the maximum of ${maxTokens} tokens.`);
      }
      throw error;
    }
  };
}
