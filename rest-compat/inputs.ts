import {
  getNullableType,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  type GraphQLEnumType,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { z } from 'zod';
import { jsonValueProblem, parseJson } from '../src/http/body.js';
import { flagText, single } from '../src/http/query.js';
import type {
  CheckInInput,
  CopyContentInput,
  CreateContentInput,
  CreateContentTypeInput,
  CreateDefaultTypePolicyInput,
  CreateFolderInput,
  CreateInheritancePolicyInput,
  CreateRepositoryInput,
  CreateTypeRestrictionPolicyInput,
  ImageConversionInput,
  MergeConversionInput,
  PropertyFilter,
  ReplaceResourceInput,
  SearchOptions,
  UpdateContentInput,
  UpdateFolderInput,
  UpdateRepositoryLimitsInput,
  WebhookInput,
} from './operations/documents.generated.js';

/** The GraphQL input types REST fills, by name, with their generated TypeScript types. */
export interface InputTypes {
  CheckInInput: CheckInInput;
  CopyContentInput: CopyContentInput;
  CreateContentInput: CreateContentInput;
  CreateContentTypeInput: CreateContentTypeInput;
  CreateDefaultTypePolicyInput: CreateDefaultTypePolicyInput;
  CreateFolderInput: CreateFolderInput;
  CreateInheritancePolicyInput: CreateInheritancePolicyInput;
  CreateRepositoryInput: CreateRepositoryInput;
  CreateTypeRestrictionPolicyInput: CreateTypeRestrictionPolicyInput;
  ImageConversionInput: ImageConversionInput;
  MergeConversionInput: MergeConversionInput;
  PropertyFilter: PropertyFilter;
  ReplaceResourceInput: ReplaceResourceInput;
  SearchOptions: SearchOptions;
  UpdateContentInput: UpdateContentInput;
  UpdateFolderInput: UpdateFolderInput;
  UpdateRepositoryLimitsInput: UpdateRepositoryLimitsInput;
  WebhookInput: WebhookInput;
}

/** The zod object of input type `N`: one schema per field, its output the generated TypeScript type. */
export type InputObject<N extends keyof InputTypes> = z.ZodObject<{ [K in keyof InputTypes[N]]-?: z.ZodType<InputTypes[N][K]> }>;

/*
 * Every reading of text (query parameters, form and multipart fields) as a typed value happens here:
 * a flag, an integer, a number, an enum value, a JSON object, a repeated list.
 */

/** An integer as text: digits only (no 1e3, no 0x10), within GraphQL's Int. */
export const integerText = z
  .string()
  .regex(/^-?\d{1,10}$/, 'must be an integer')
  .transform(Number)
  .pipe(z.number().int('must be an integer').min(-(2 ** 31), 'must be an integer').max(2 ** 31 - 1, 'must be an integer'));
const numberText = z
  .string()
  .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'must be a number')
  .transform(Number)
  .pipe(z.number().finite('must be a number'));
/** A JSON object sent as text (`properties`); an empty field is none. */
const jsonObjectText = z.string().transform((text, ctx) => {
  if (text === '') return null;
  try {
    const value = parseJson(text, 'JSON');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `must be JSON (${(error as Error).message})` });
  }
  return z.NEVER;
});
/** A JSON object in a JSON body: what the JSONObject scalar takes (no array, no value JSON cannot hold). */
const jsonObject = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  const problem = jsonValueProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** The spec's clients write enum values in either case (ASC, asc; PNG, png), in parameters and in JSON bodies. */
function enumSchema(type: GraphQLEnumType): z.ZodType<string> {
  const names = type.getValues().map((value) => value.name) as [string, ...string[]];
  const message = `must be one of ${names.map((name) => `'${name}'`).join(', ')}`;
  return z
    .string({ message })
    .transform((text) => names.find((name) => name.toLowerCase() === text.toLowerCase()) ?? text)
    .pipe(z.enum(names, { message }));
}

/** A list parameter: `tags=a&tags=b` (one given is a list of one). */
export const repeated = <T extends z.ZodType<unknown, string>>(item: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]))
    .pipe(z.array(item));

/** How a leaf value of `type` is read from text, or from JSON (`fromText` false). */
function leafSchema(type: GraphQLInputType, fromText: boolean): z.ZodType {
  const named = getNullableType(type);
  if (isEnumType(named)) return enumSchema(named);
  if (named === GraphQLBoolean) return fromText ? flagText : z.boolean({ message: 'must be a boolean' });
  if (named === GraphQLInt) return fromText ? integerText : z.number({ message: 'must be an integer' }).int('must be an integer').min(-(2 ** 31)).max(2 ** 31 - 1);
  if (named === GraphQLFloat) return fromText ? numberText : z.number({ message: 'must be a number' });
  // an ID is a JSON string here (GraphQL would take 7 as "7")
  if (named === GraphQLString || named === GraphQLID) return z.string({ message: 'must be a string' });
  if (isInputObjectType(named)) {
    if (fromText) throw new Error(`input object ${named.name} cannot be read from text`);
    return objectSchema(named, false);
  }
  // the other scalar REST fills is JSONObject
  return fromText ? jsonObjectText : jsonObject;
}

function fieldSchema(type: GraphQLInputType, fromText: boolean): z.ZodType {
  const nullable = getNullableType(type);
  let schema: z.ZodType;
  if (isListType(nullable)) {
    const item = leafSchema(nullable.ofType, fromText);
    schema = fromText ? repeated(item as z.ZodType<unknown, string>) : z.array(item, { message: 'must be a list' });
  } else {
    schema = fromText ? single(leafSchema(nullable, true) as z.ZodType<unknown, string>) : leafSchema(nullable, false);
  }
  // text is never null; a JSON null is GraphQL's "none"
  if (isNonNullType(type)) return schema;
  return fromText ? schema.optional() : schema.nullish();
}

function objectSchema(type: GraphQLInputObjectType, fromText: boolean): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const field of Object.values(type.getFields())) {
    const schema = fieldSchema(field.type, fromText);
    shape[field.name] = field.description ? schema.meta({ description: field.description }) : schema;
  }
  // a JSON body names only the type's fields; a text source holds other parameters too (sessionId, paging)
  return fromText ? z.object(shape) : z.strictObject(shape);
}

/**
 * REST's input schemas, derived from the GraphQL input types the resolvers declare (one class per
 * verb, src/modules/<capability>/inputs.ts): REST accepts what the GraphQL API accepts, and the zod
 * schemas validate the requests and describe them in the OpenAPI document.
 */
export class InputSchemas {
  private readonly cache = new Map<string, z.ZodObject>();

  constructor(private readonly schemas: readonly GraphQLSchema[]) {}

  private inputType(name: keyof InputTypes): GraphQLInputObjectType {
    for (const schema of this.schemas) {
      const type = schema.getType(name);
      if (isInputObjectType(type)) return type;
    }
    throw new Error(`no GraphQL input type ${name}`);
  }

  private cached(key: string, make: () => z.ZodObject): z.ZodObject {
    let schema = this.cache.get(key);
    if (!schema) this.cache.set(key, (schema = make()));
    return schema;
  }

  /** Input type `name` as a JSON object: exactly its fields. */
  json<N extends keyof InputTypes>(name: N): InputObject<N> {
    return this.cached(`json:${name}`, () => objectSchema(this.inputType(name), false)) as unknown as InputObject<N>;
  }

  /** The fields of input type `name` read from text (query parameters, form fields); other names are left alone. */
  text<N extends keyof InputTypes>(name: N): InputObject<N> {
    return this.cached(`text:${name}`, () => objectSchema(this.inputType(name), true)) as unknown as InputObject<N>;
  }
}

/** The fields of `schema` among `values` (a query holding several groups of parameters). */
export function fieldsOf<S extends z.ZodObject>(values: Record<string, unknown>, schema: S): z.output<S> {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(schema.shape)) if (values[key] !== undefined) picked[key] = values[key];
  // `values` was parsed by a schema holding `schema`'s fields
  return picked as z.output<S>;
}
