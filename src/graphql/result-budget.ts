import { defaultFieldResolver, getNullableType, GraphQLError, isListType, isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';

/** The error of an operation whose result would hold more list items than the budget (HTTP 413 on the REST layer). */
function resultTooLarge(maxItems: number): GraphQLError {
  return new GraphQLError(`The result would hold more than ${maxItems} list items: ask for smaller pages or fewer fields.`, {
    extensions: { code: 'RESULT_TOO_LARGE', reasonCode: 'tooLarge', status: 413, max: maxItems },
  });
}

/**
 * Bounds what one query or mutation can make a subgraph build, whatever the cost estimate assumed:
 * every list field charges its length to a budget of `maxItems` per resolver context (one per
 * operation and subgraph); the list that overdraws it resolves to an error instead, so its items are
 * never resolved and the response is cut off there (a non-null list nulls its parent, as GraphQL
 * does with any field error). Subscriptions are not charged: each event is one small result.
 *
 * Changes the schema's resolvers in place (list fields only: other fields keep the default resolver).
 */
export function chargeListItems(schema: GraphQLSchema, maxItems: number): void {
  const spent = new WeakMap<object, number>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!isListType(getNullableType(field.type))) continue;
      const resolve: GraphQLFieldResolver<unknown, unknown> = field.resolve ?? defaultFieldResolver;
      const charge = (items: unknown, context: unknown): unknown => {
        if (!Array.isArray(items) || typeof context !== 'object' || context === null) return items;
        const total = (spent.get(context) ?? 0) + items.length;
        spent.set(context, total);
        return total > maxItems ? resultTooLarge(maxItems) : items;
      };
      field.resolve = (source, args, context, info) => {
        const items = resolve(source, args, context, info);
        if (info.operation.operation === 'subscription') return items;
        return items instanceof Promise ? items.then((value) => charge(value, context)) : charge(items, context);
      };
    }
  }
}
