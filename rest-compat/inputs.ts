import {
  coerceInputValue,
  getNamedType,
  getNullableType,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  isEnumType,
  isInputObjectType,
  isListType,
  type GraphQLEnumType,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { illegalArguments } from '../src/errors.js';
import { parseJson } from '../src/http/body.js';
import { flagText } from '../src/http/query.js';
import type {
  AclInput,
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
  RepositoryAclInput,
  ReplaceResourceInput,
  SearchOptions,
  UpdateContentInput,
  UpdateFolderInput,
  UpdateRepositoryLimitsInput,
} from './operations/documents.generated.js';

/** The GraphQL input types REST fills, by name, with their generated TypeScript types. */
export interface InputTypes {
  AclInput: AclInput;
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
  RepositoryAclInput: RepositoryAclInput;
  ReplaceResourceInput: ReplaceResourceInput;
  SearchOptions: SearchOptions;
  UpdateContentInput: UpdateContentInput;
  UpdateFolderInput: UpdateFolderInput;
  UpdateRepositoryLimitsInput: UpdateRepositoryLimitsInput;
}

export type TextSource = Record<string, string | string[] | undefined>;

/** The spec's clients write enum values in either case (ASC, asc; PNG, png), in parameters and in JSON bodies. */
function enumValueOf(type: GraphQLEnumType, text: string): string {
  const value = type.getValues().find((v) => v.name.toLowerCase() === text.toLowerCase());
  if (!value) throw new Error(`must be one of ${type.getValues().map((v) => `'${v.name}'`).join(', ')}`);
  return value.name;
}

/** One text value as the scalar or enum `type` (query parameters and form fields are text). */
function fromText(type: GraphQLInputType, text: string): unknown {
  const named = getNamedType(type);
  if (named === GraphQLBoolean) {
    const flag = flagText.safeParse(text);
    if (!flag.success) throw new Error(flag.error.issues[0]!.message);
    return flag.data;
  }
  if (named === GraphQLInt) {
    if (!/^-?\d{1,15}$/.test(text)) throw new Error('must be an integer');
    return Number(text);
  }
  if (named === GraphQLFloat) return Number(text);
  if (isEnumType(named)) return enumValueOf(named, text);
  if (named === GraphQLString || named === GraphQLID) return text;
  // other scalars (JSONObject) are sent as JSON text; an empty field is none
  if (text === '') return null;
  // parseJson also refuses what JSON.parse would silently change (1e309 → Infinity)
  try {
    return parseJson(text, named.name);
  } catch (error) {
    throw new Error(`must be JSON (${(error as Error).message})`);
  }
}

/**
 * REST's input parsing, derived from the GraphQL input types the resolvers declare (one class per
 * verb, src/modules/<capability>/inputs.ts): text sources are converted field by field as the type
 * says, JSON bodies are taken as they are, and both are then validated by graphql-js against the same
 * type, so REST accepts exactly what the GraphQL API accepts. A failure is a 400 naming the field.
 */
export class RestInputs {
  constructor(private readonly schemas: readonly GraphQLSchema[]) {}

  private inputType(name: keyof InputTypes): GraphQLInputObjectType {
    for (const schema of this.schemas) {
      const type = schema.getType(name);
      if (isInputObjectType(type)) return type;
    }
    throw new Error(`no GraphQL input type ${name}`);
  }

  private validated<N extends keyof InputTypes>(type: GraphQLInputObjectType, value: unknown, where: string): InputTypes[N] {
    const problems: string[] = [];
    const coerced = coerceInputValue(value, type, (path, _invalid, error) => {
      problems.push(path.length > 0 ? `${path.join('.')}: ${error.message}` : error.message);
    });
    if (problems.length > 0) throw illegalArguments(`invalid ${where}: ${problems.join('; ')}`);
    // graphql-js checked the value against the type the generated TypeScript type describes
    return coerced as InputTypes[N];
  }

  /**
   * The fields of input type `name` found in a text source (query parameters, form fields); other
   * names in the source are left alone. A field given twice is a 400 unless the field is a list.
   */
  fromText<N extends keyof InputTypes>(name: N, source: TextSource, where = 'parameter'): InputTypes[N] {
    const type = this.inputType(name);
    const value: Record<string, unknown> = {};
    const problems: string[] = [];
    for (const field of Object.values(type.getFields())) {
      const raw = source[field.name];
      if (raw === undefined) continue;
      const texts = Array.isArray(raw) ? raw : [raw];
      try {
        if (isListType(getNullableType(field.type))) value[field.name] = texts.map((text) => fromText(field.type, text));
        else if (texts.length > 1) throw new Error('must be given once');
        else value[field.name] = fromText(field.type, texts[0]!);
      } catch (error) {
        problems.push(`${field.name} ${(error as Error).message}`);
      }
    }
    if (problems.length > 0) throw illegalArguments(`invalid ${where}: ${problems.join('; ')}`);
    return this.validated<N>(type, value, where);
  }

  /**
   * Refuses names in `given` that input type `name` has no field for: a multipart field a client sends
   * must not be lost without a word (a check-in with `name` and `tags` fields answered 200 and kept
   * neither).
   */
  requireKnownFields(name: keyof InputTypes, given: Iterable<string>, where = 'field', except: string[] = []): void {
    const known = Object.keys(this.inputType(name).getFields()).filter((field) => !except.includes(field));
    const unknown = [...given].filter((field) => !known.includes(field));
    if (unknown.length > 0) {
      throw illegalArguments(`unknown ${where}${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `'${f}'`).join(', ')} (known: ${known.join(', ')})`);
    }
  }

  /** A JSON object as input type `name`; an ID must be a JSON string here (GraphQL would take 7 as "7"). */
  fromJson<N extends keyof InputTypes>(name: N, body: Record<string, unknown>, where = 'body'): InputTypes[N] {
    const type = this.inputType(name);
    const numericIds = Object.values(type.getFields())
      .filter((field) => getNamedType(field.type) === GraphQLID && typeof body[field.name] === 'number')
      .map((field) => `${field.name} must be a string`);
    if (numericIds.length > 0) throw illegalArguments(`invalid ${where}: ${numericIds.join('; ')}`);
    const value = { ...body };
    const problems: string[] = [];
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      const given = value[field.name];
      if (!isEnumType(named) || typeof given !== 'string') continue;
      try {
        value[field.name] = enumValueOf(named, given);
      } catch (error) {
        problems.push(`${field.name} ${(error as Error).message}`);
      }
    }
    if (problems.length > 0) throw illegalArguments(`invalid ${where}: ${problems.join('; ')}`);
    return this.validated<N>(type, value, where);
  }
}
