import { registerEnumType } from 'type-graphql';

/**
 * A GraphQL enum of a value set declared once as a list (`as const`): each value is its own name.
 * Answers the object a field's type names, which has the values as keys, like a TypeScript enum;
 * `valuesConfig` describes every value (a value missing or unknown there does not compile).
 */
export function graphqlEnum<V extends string>(
  values: readonly V[],
  config: { name: string; description: string; valuesConfig: Record<V, { description: string }> },
): { readonly [K in V]: K } {
  const enumObject = Object.fromEntries(values.map((value) => [value, value])) as { readonly [K in V]: K };
  registerEnumType(enumObject, config);
  return enumObject;
}
