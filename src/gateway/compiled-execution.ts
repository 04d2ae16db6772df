import { execute, getOperationAST, valueFromASTUntyped, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

/**
 * A compiled operation with its variables' default values as a client would write them. graphql-jit
 * (0.8.9) refuses an omitted non-null variable that has a default (`$withChildren: Boolean! = false`,
 * as the REST documents declare) where GraphQL takes the default: the defaults are filled in first.
 */
interface Compiled {
  query: CompiledQuery;
  defaults: [string, unknown][];
}

/** Per operation name of a document: not seen yet (absent), run once, compiled, or not compilable. */
type Compilation = 'ranOnce' | 'notCompilable' | Compiled;

/**
 * Queries and mutations of the in-process subgraphs, compiled by graphql-jit. graphql-js walks a
 * result field by field (a search page of 100 entries is ≈ 5,000 fields: 4 of its 13 ms on the
 * service's side, docs/benchmarks.md); a compiled document resolves the same fields through generated
 * code. A document is compiled the second time it runs, as Mercurius' `jit: 1` does: the documents
 * the REST routes and the gateway's parse cache reuse are compiled once, a one-off document never is.
 * What graphql-jit cannot compile runs on graphql-js, and subscriptions always do (the caller's).
 */
export class CompiledExecution {
  readonly #bySchema = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, Compilation>>>();

  execute(args: ExecutionArgs): Promise<ExecutionResult> | ExecutionResult {
    const compiled = this.#compiled(args);
    if (!compiled) return execute(args);
    const variables = { ...args.variableValues };
    for (const [name, value] of compiled.defaults) if (!Object.hasOwn(variables, name)) variables[name] = value;
    return compiled.query.query(args.rootValue, args.contextValue, variables);
  }

  #compiled({ schema, document, operationName }: ExecutionArgs): Compiled | undefined {
    let byDocument = this.#bySchema.get(schema);
    if (!byDocument) this.#bySchema.set(schema, (byDocument = new WeakMap()));
    let byOperation = byDocument.get(document);
    if (!byOperation) byDocument.set(document, (byOperation = new Map()));
    const key = operationName ?? '';
    const known = byOperation.get(key);
    if (known === undefined) {
      byOperation.set(key, 'ranOnce');
      return undefined;
    }
    if (known !== 'ranOnce') return known === 'notCompilable' ? undefined : known;
    let compilation: Compilation = 'notCompilable';
    try {
      const compiled = compileQuery(schema, document, operationName ?? undefined);
      const definitions = getOperationAST(document, operationName)?.variableDefinitions ?? [];
      const defaults = definitions.flatMap((d): [string, unknown][] => (d.defaultValue ? [[d.variable.name.value, valueFromASTUntyped(d.defaultValue)]] : []));
      if (isCompiledQuery(compiled)) compilation = { query: compiled, defaults };
    } catch {
      // graphql-js runs it (and reports whatever is wrong with it)
    }
    byOperation.set(key, compilation);
    return compilation === 'notCompilable' ? undefined : compilation;
  }
}
