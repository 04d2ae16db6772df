import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type {
  DefinitionNode,
  DirectiveNode,
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLField,
  GraphQLNamedType,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
  ValidationContext,
  ValueNode,
} from 'graphql';
import { getNamedType, getNullableType, getOperationAST, GraphQLError, isCompositeType, isInterfaceType, isListType, isObjectType, Kind, parse, valueFromASTUntyped } from 'graphql';

/** The largest GraphQL request: a POST's body, a graphql-ws message. */
export const maxOperationBytes = 2 * 1024 * 1024;

/**
 * Bounds of one GraphQL operation (DESIGN §9). Depth and aliases are graphql-armor's rules (fragments
 * expanded: a fragment spread N times counts N times); nested introspection is bounded by graphql-js'
 * own MaxIntrospectionDepthRule; tokens by graphql-js' parser option; cost below.
 */
export interface QueryLimits {
  /** deepest field nesting (a top-level field has depth 1; `__schema` subtrees are left to MaxIntrospectionDepthRule) */
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
  /**
   * `__schema` and `__type` fields in one document (default 3): each may answer the whole schema
   * (≈ 120 kB), and the cost leaves introspection out: 30 aliases of `__schema` were 3.7 MB a request,
   * without a session.
   */
  maxIntrospectionFields?: number;
  /**
   * Fields of an operation once its fragments are expanded (default 10000). Fragments that each spread
   * the next twice make a 1 KB document of 2^25 fields: the planning and execution that walk the
   * expanded tree froze the process for seconds to minutes, before any session was checked.
   */
  maxExpandedFields?: number;
}

/**
 * `field(<argument>: {<inputField>: n}) { <sizedField> { … } }`: the list `sizedField` holds at most n
 * items; n is capped at `maxSize` (the most the field accepts), and no value counts as `defaultSize`.
 * Declared here because composition's `@listSize(slicingArguments:)` only takes top-level Int
 * arguments, and ours is `options.limit`; and Hive's `demandControl` prices the planned subgraph
 * requests inside execution (no 400, and not the single-subgraph shortcut's), so this is a check of
 * its own, before execution.
 */
export interface SlicedList {
  argument: string;
  /** the field of the input object `argument` that holds the size; absent: `argument` is the size itself (`jobs(limit: n)`) */
  inputField?: string;
  sizedField: string;
  defaultSize: number;
  maxSize: number;
}

interface SizedField {
  name: string;
  size: number;
}

type LimitName = 'depth' | 'aliases' | 'cost' | 'tokens' | 'introspection' | 'expandedFields';

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

interface MeasureOptions {
  listFactor: number;
  slicedLists: readonly SlicedList[];
  /** the operation's variables: given, @skip/@include are applied and variable slicing arguments read; absent, every selection counts and every variable list is at its largest */
  variables?: Readonly<Record<string, unknown>>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The cost of one operation. Linear in the document size: each fragment is measured once per list
 * size it is spread under (memoized), so a "fragment bomb" cannot make this slow.
 */
function measureCost(schema: GraphQLSchema, definitions: readonly DefinitionNode[], operation: OperationDefinitionNode, options: MeasureOptions): number {
  const { listFactor, slicedLists, variables } = options;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  const memo = new Map<string, number>();
  const visiting = new Set<string>();
  // a variable the request leaves out has its default (`$withChildren: Boolean! = false`)
  const defaults = new Map<string, unknown>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) defaults.set(definition.variable.name.value, valueFromASTUntyped(definition.defaultValue));
  }
  const variableValue = (name: string): unknown => (variables && name in variables ? variables[name] : defaults.get(name));

  const valueOf = (node: ValueNode | undefined): unknown => {
    if (node?.kind === Kind.VARIABLE) return variables ? variableValue(node.name.value) : Infinity;
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
      if (sliced.inputField === undefined) {
        value = valueOf(argument);
      } else if (argument?.kind === Kind.VARIABLE) {
        const object = variables ? variableValue(argument.name.value) : undefined;
        value = variables ? (isRecord(object) ? object[sliced.inputField] : undefined) : Infinity;
      } else if (argument?.kind === Kind.OBJECT) {
        value = valueOf(argument.fields.find((f) => f.name.value === sliced.inputField)?.value);
      }
      const size = typeof value === 'number' && !Number.isNaN(value) ? Math.min(Math.max(value, 0), sliced.maxSize) : sliced.defaultSize;
      return { name: sliced.sizedField, size };
    }
    return undefined;
  };

  const fragmentCost = (name: string, sized: SizedField | undefined): number => {
    const key = sized ? `${name}\u0000${sized.name}\u0000${sized.size}` : name;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    const fragment = fragments.get(name);
    if (!fragment || visiting.has(name)) return 0; // unknown or cyclic: validation reports it
    visiting.add(name);
    const cost = selectionSetCost(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value), sized);
    visiting.delete(name);
    memo.set(key, cost);
    return cost;
  };

  const fieldOf = (type: GraphQLNamedType | undefined | null, name: string): GraphQLField<unknown, unknown> | undefined => {
    if (type && (isObjectType(type) || isInterfaceType(type))) return type.getFields()[name];
    return undefined;
  };

  /** `sized`: the list field of this selection set that a slicing argument of the field above sized */
  function selectionSetCost(set: SelectionSetNode, parent: GraphQLNamedType | undefined | null, sized: SizedField | undefined): number {
    let cost = 0;
    for (const selection of set.selections) {
      if (excluded(selection.directives)) continue;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name.startsWith('__')) continue; // __typename and introspection cost nothing against the data budget
        const field = fieldOf(parent, name);
        if (!field) continue;
        const sub = selection.selectionSet ? selectionSetCost(selection.selectionSet, getNamedType(field.type), slicedSize(selection, field)) : 0;
        const size = isListType(getNullableType(field.type)) ? (sized?.name === name ? sized.size : listFactor) : 1;
        cost += ((isCompositeType(getNamedType(field.type)) ? 1 : 0) + sub) * size;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        cost += selectionSetCost(selection.selectionSet, selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent, sized);
      } else {
        cost += fragmentCost(selection.name.value, sized);
      }
    }
    return cost;
  }

  const root = operation.operation === 'mutation' ? schema.getMutationType() : operation.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  return selectionSetCost(operation.selectionSet, root, undefined);
}

/** At most `max` introspection fields (`__schema`, `__type`) in a document: they can only be written out, one per alias. */
function introspectionFieldsRule(max: number) {
  return (context: ValidationContext) => {
    let count = 0;
    return {
      Field(node: FieldNode) {
        if (node.name.value !== '__schema' && node.name.value !== '__type') return;
        count++;
        if (count === max + 1) {
          context.reportError(limitError('introspection', undefined, max, `An operation may ask for at most ${max} introspection fields (__schema, __type).`));
        }
      },
    };
  };
}

/** Fields of each operation with its fragments expanded, counted in time linear in the document (each fragment measured once). */
function expandedFieldsRule(max: number) {
  return (context: ValidationContext) => ({
    Document(document: DocumentNode) {
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      const sizes = new Map<string, number>();
      const visiting = new Set<string>();
      const fragmentSize = (name: string): number => {
        const known = sizes.get(name);
        if (known !== undefined) return known;
        const fragment = fragments.get(name);
        if (!fragment || visiting.has(name)) return 0; // unknown or cyclic: validation reports it
        visiting.add(name);
        const size = setSize(fragment.selectionSet);
        visiting.delete(name);
        sizes.set(name, size);
        return size;
      };
      const setSize = (set: SelectionSetNode): number => {
        let size = 0;
        for (const selection of set.selections) {
          if (selection.kind === Kind.FIELD) size += 1 + (selection.selectionSet ? setSize(selection.selectionSet) : 0);
          else if (selection.kind === Kind.INLINE_FRAGMENT) size += setSize(selection.selectionSet);
          else size += fragmentSize(selection.name.value);
        }
        return size;
      };
      for (const definition of document.definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
        const size = setSize(definition.selectionSet);
        if (size > max) {
          const shown = Number.isFinite(size) && size < 1e15 ? String(size) : 'more than 10^15';
          context.reportError(limitError('expandedFields', Number.isFinite(size) ? size : undefined, max, `The operation has ${shown} fields once its fragments are expanded; at most ${max}.`));
        }
      }
    },
  });
}

/**
 * The cost check of one operation about to run: the error that refuses it (HTTP 400) when its
 * estimated cost with these variables is over `maxCost`.
 */
export function createCostCheck(limits: QueryLimits) {
  const options = { listFactor: limits.listFactor ?? 10, slicedLists: limits.slicedLists ?? [] };
  // per operation of a (cached) document: its cost with every list at its largest and every selection
  // included. Most operations stay under the bound even so, and need no measuring per request.
  const upperBounds = new WeakMap<OperationDefinitionNode, number>();
  return (schema: GraphQLSchema, document: { definitions: readonly DefinitionNode[] }, operation: OperationDefinitionNode, variables: Readonly<Record<string, unknown>>): GraphQLError | undefined => {
    let upperBound = upperBounds.get(operation);
    if (upperBound === undefined) {
      upperBound = measureCost(schema, document.definitions, operation, options);
      upperBounds.set(operation, upperBound);
    }
    if (upperBound <= limits.maxCost) return undefined;
    const cost = measureCost(schema, document.definitions, operation, { ...options, variables });
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
 * The bounds as a gateway plugin: tokens in the parser, depth and aliases as graphql-armor's
 * validation rules (both cached per document by the runtime), cost before execution (it needs the variables). Every path
 * into the runtime's pipeline (HTTP, graphql-ws, SSE, REST's execute) runs it.
 */
export function useOperationLimits(limits: QueryLimits): GatewayPlugin {
  const parseFn = boundedParse(limits.maxTokens ?? 10_000);
  // graphql-armor reports through these (instead of throwing out of validation), as our other bounds do
  const reportAs =
    (limit: LimitName, max: number) =>
    (context: ValidationContext | null, error: GraphQLError): void =>
      context?.reportError(limitError(limit, undefined, max, error.message.replace(/^Syntax Error: /, '')));
  const depthRule = maxDepthRule({ n: limits.maxDepth, flattenFragments: true, ignoreIntrospection: true, propagateOnRejection: false, onReject: [reportAs('depth', limits.maxDepth)] });
  const aliasesRule = maxAliasesRule({ n: limits.maxAliases, propagateOnRejection: false, onReject: [reportAs('aliases', limits.maxAliases)] });
  const introspectionRule = introspectionFieldsRule(limits.maxIntrospectionFields ?? 3);
  const expandedRule = expandedFieldsRule(limits.maxExpandedFields ?? 10_000);
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
      addValidationRule(expandedRule);
      addValidationRule(depthRule);
      addValidationRule(aliasesRule);
      addValidationRule(introspectionRule);
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
