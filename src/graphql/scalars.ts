export { GraphQLJSONObject as JSONObject, GraphQLSafeInt as SafeInt } from 'graphql-scalars';
