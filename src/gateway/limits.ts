import type {
  DefinitionNode,
  DocumentNode,
  DirectiveNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLField,
  GraphQLNamedType,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
  ValidationContext,
  ValidationRule,
  ValueNode,
} from 'graphql';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { getNamedType, getNullableType, getOperationAST, GraphQLError, isCompositeType, isInterfaceType, isListType, isObjectType, Kind, parse } from 'graphql';

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
   * Estimated cost, counted as GraphQL demand control (IBM cost specification) counts it: a field
   * returning an object, interface or union costs 1 (scalars and `__typename` 0), and everything under
   * a list is multiplied by the list's size — its slicing argument (`slicedLists`) or else `listFactor` —
   * so nested lists multiply. `children(options: {limit: 1000}) { entries { parent { id } } }` costs
   * 1 + 1000 × (1 + 1). Checked when the operation runs, with its variables (and @skip/@include).
   */
  maxCost: number;
  /** size assumed for a list without a slicing argument (default 10) */
  listFactor?: number;
  /** lists sized by an argument of the field above them (demand control's `@listSize(slicingArguments:, sizedFields:)`) */
  slicedLists?: readonly SlicedList[];
  /** parser token limit: a document with more tokens is rejected before it is even parsed fully (default 10000) */
  maxTokens?: number;
  /** depth limit within `__schema` / `__type` subtrees (default 20; GraphiQL's introspection query needs 15). graphql-js' own MaxIntrospectionDepthRule also applies */
  maxIntrospectionDepth?: number;
}

/**
 * `field(<argument>: {<inputField>: n}) { <sizedField> { … } }`: the list `sizedField` holds at most n
 * items; n is capped at `maxSize` (the most the field accepts), and no value counts as `defaultSize`.
 * Declared here because composition's `@listSize(slicingArguments:)` only takes top-level Int
 * arguments, and ours is `options.limit`.
 */
export interface SlicedList {
  argument: string;
  inputField: string;
  sizedField: string;
  defaultSize: number;
  maxSize: number;
}

interface SizedField {
  name: string;
  size: number;
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
      code: limit === 'cost' ? 'COST_ESTIMATED_TOO_EXPENSIVE' : 'GRAPHQL_VALIDATION_FAILED',
      reasonCode: 'illegalArguments',
      status: 400,
      http: { status: 400 },
      limit,
      max,
      ...(actual === undefined ? {} : { actual }),
    },
  });
}

const ZERO: OperationMeasure = { depth: 0, introspectionDepth: 0, aliases: 0, cost: 0 };

interface MeasureOptions {
  listFactor: number;
  slicedLists: readonly SlicedList[];
  /** the operation's variables: given, @skip/@include are applied and variable slicing arguments read; absent, every selection counts */
  variables?: Readonly<Record<string, unknown>>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Measures the operations of a document. Linear in the document size: each fragment is measured once
 * per list size it is spread under (memoized), so a "fragment bomb" cannot make this slow.
 */
function measureOperations(schema: GraphQLSchema, definitions: readonly DefinitionNode[], operations: readonly OperationDefinitionNode[], options: MeasureOptions): OperationMeasure[] {
  const { listFactor, slicedLists, variables } = options;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  const memo = new Map<string, OperationMeasure>();
  const visiting = new Set<string>();

  const valueOf = (node: ValueNode | undefined): unknown => {
    if (node?.kind === Kind.VARIABLE) return variables?.[node.name.value];
    if (node?.kind === Kind.INT) return Number(node.value);
    if (node?.kind === Kind.BOOLEAN) return node.value;
    return undefined;
  };

  /** @skip(if: true) / @include(if: false), when the values are known */
  const excluded = (directives: readonly DirectiveNode[] | undefined): boolean => {
    if (!variables || !directives) return false;
    for (const directive of directives) {
      const condition = valueOf(directive.arguments?.find((a) => a.name.value === 'if')?.value);
      if (directive.name.value === 'skip' && condition === true) return true;
      if (directive.name.value === 'include' && condition === false) return true;
    }
    return false;
  };

  /** the size a sliced list below this field gets from the field's arguments */
  const slicedSize = (selection: FieldNode, field: GraphQLField<unknown, unknown> | undefined): SizedField | undefined => {
    for (const sliced of slicedLists) {
      if (!field?.args.some((arg) => arg.name === sliced.argument)) continue;
      const argument = selection.arguments?.find((arg) => arg.name.value === sliced.argument)?.value;
      let value: unknown;
      if (argument?.kind === Kind.VARIABLE) {
        const object = variables?.[argument.name.value];
        value = variables ? (isRecord(object) ? object[sliced.inputField] : undefined) : Infinity;
      } else if (argument?.kind === Kind.OBJECT) {
        const node = argument.fields.find((f) => f.name.value === sliced.inputField)?.value;
        value = node?.kind === Kind.VARIABLE && !variables ? Infinity : valueOf(node);
      }
      const size = typeof value === 'number' && !Number.isNaN(value) ? Math.min(Math.max(value, 0), sliced.maxSize) : sliced.defaultSize;
      return { name: sliced.sizedField, size };
    }
    return undefined;
  };

  const fragmentMeasure = (name: string, sized: SizedField | undefined): OperationMeasure => {
    const key = sized ? `${name}\u0000${sized.name}\u0000${sized.size}` : name;
    const cached = memo.get(key);
    if (cached) return cached;
    const fragment = fragments.get(name);
    if (!fragment || visiting.has(name)) return ZERO; // unknown or cyclic: other validation rules report it
    visiting.add(name);
    const measure = measureSelectionSet(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value), false, sized);
    visiting.delete(name);
    memo.set(key, measure);
    return measure;
  };

  const fieldOf = (type: GraphQLNamedType | undefined | null, name: string): GraphQLField<unknown, unknown> | undefined => {
    if (type && (isObjectType(type) || isInterfaceType(type))) return type.getFields()[name];
    return undefined;
  };

  /** `sized`: the list field of this selection set that a slicing argument of the field above sized */
  function measureSelectionSet(set: SelectionSetNode, parent: GraphQLNamedType | undefined | null, inIntrospection: boolean, sized: SizedField | undefined): OperationMeasure {
    let depth = 0;
    let introspectionDepth = 0;
    let aliases = 0;
    let cost = 0;
    for (const selection of set.selections) {
      if (excluded(selection.directives)) continue;
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
          sub = measureSelectionSet(selection.selectionSet, childType, nested, slicedSize(selection, field));
        }
        if (nested) {
          // introspection: bounded by its own depth limit; costs nothing against the data budget
          introspectionDepth = Math.max(introspectionDepth, 1 + sub.introspectionDepth);
          depth = Math.max(depth, inIntrospection ? 0 : 1);
          aliases += sub.aliases;
          continue;
        }
        const size = isList ? (sized?.name === name ? sized.size : listFactor) : 1;
        const ownCost = field && isCompositeType(getNamedType(field.type)) ? 1 : 0;
        child = {
          depth: 1 + sub.depth,
          introspectionDepth: sub.introspectionDepth,
          aliases: sub.aliases,
          cost: (ownCost + sub.cost) * size,
        };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        child = measureSelectionSet(selection.selectionSet, type, inIntrospection, sized);
      } else {
        child = fragmentMeasure(selection.name.value, sized);
        if (inIntrospection) child = { ...child, introspectionDepth: Math.max(child.introspectionDepth, child.depth), depth: 0, cost: 0 };
      }
      depth = Math.max(depth, child.depth);
      introspectionDepth = Math.max(introspectionDepth, child.introspectionDepth);
      aliases += child.aliases;
      cost += child.cost;
    }
    return { depth, introspectionDepth, aliases, cost };
  }

  return operations.map((operation) => {
    const root =
      operation.operation === 'mutation' ? schema.getMutationType() : operation.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
    return measureSelectionSet(operation.selectionSet, root, false, undefined);
  });
}

const operationsOf = (definitions: readonly DefinitionNode[]) => definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);

/** A validation rule enforcing the depth and alias bounds on every operation of the document (cost needs the variables: `operationCostError`). */
export function createLimitsRule(limits: QueryLimits): ValidationRule {
  const options: MeasureOptions = { listFactor: limits.listFactor ?? 10, slicedLists: limits.slicedLists ?? [] };
  const maxIntrospectionDepth = limits.maxIntrospectionDepth ?? 20;
  return function QueryLimitsRule(context: ValidationContext) {
    return {
      Document: {
        leave(document) {
          for (const m of measureOperations(context.getSchema(), document.definitions, operationsOf(document.definitions), options)) {
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
          }
        },
      },
    };
  };
}

/**
 * The cost check of one operation about to run: its estimated cost with these variables, or the error
 * that refuses it (HTTP 400) when over `maxCost`.
 */
export function createCostCheck(limits: QueryLimits) {
  const listFactor = limits.listFactor ?? 10;
  const slicedLists = limits.slicedLists ?? [];
  // per operation of a (cached) document: its cost with every list at its largest and every selection
  // included. Most operations stay under the bound even so, and need no measuring per request.
  const upperBounds = new WeakMap<OperationDefinitionNode, number>();
  return (schema: GraphQLSchema, document: { definitions: readonly DefinitionNode[] }, operation: OperationDefinitionNode, variables: Readonly<Record<string, unknown>>): GraphQLError | undefined => {
    let upperBound = upperBounds.get(operation);
    if (upperBound === undefined) {
      upperBound = measureOperations(schema, document.definitions, [operation], { listFactor, slicedLists })[0]?.cost ?? 0;
      upperBounds.set(operation, upperBound);
    }
    if (upperBound <= limits.maxCost) return undefined;
    const cost = measureOperations(schema, document.definitions, [operation], { listFactor, slicedLists, variables })[0]?.cost ?? 0;
    if (cost <= limits.maxCost) return undefined;
    return limitError('cost', cost, limits.maxCost, `Query cost ${cost} exceeds the maximum cost of ${limits.maxCost}.`);
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

/**
 * The bounds as a gateway plugin: tokens in the parser, depth and aliases as a validation rule (both
 * cached per document by the runtime), cost before execution (it needs the variables). Every path
 * into the runtime's pipeline (HTTP, graphql-ws, SSE, REST's execute) runs it.
 */
export function useOperationLimits(limits: QueryLimits): GatewayPlugin {
  const parseFn = boundedParse(limits.maxTokens ?? 10_000);
  const limitsRule = createLimitsRule(limits);
  const costCheck = createCostCheck(limits);
  const costError = (args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: Readonly<Record<string, unknown>> | null }) => {
    const operation = getOperationAST(args.document, args.operationName);
    return operation ? costCheck(args.schema, args.document, operation, args.variableValues ?? {}) : undefined;
  };
  return {
    onParse({ setParseFn }) {
      setParseFn(parseFn);
    },
    onValidate({ addValidationRule }) {
      addValidationRule(limitsRule);
    },
    onExecute({ args, setResultAndStopExecution }) {
      const error = costError(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = costError(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}
