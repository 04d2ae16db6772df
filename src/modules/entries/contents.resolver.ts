import { Arg, Authorized, Ctx, Field, ID, InputType, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { JSONObject } from '../../graphql/scalars.js';
import { createContent, getContent } from './contents.js';
import { ContentNode } from './entry.types.js';
import { entryScope } from './scope-of-request.js';

@InputType('CreateContentInput')
export class CreateContentInput {
  @Field(() => ID, { description: 'the id answered by POST …/uploads' }) uploadId!: string;
  @Field(() => String, { nullable: true, description: "default: the uploaded file's name" }) name?: string;
  @Field(() => ID, { nullable: true }) parentId?: string;
  @Field(() => String, { nullable: true, description: 'default: sniffed from the bytes' }) mimeType?: string;
  @Field(() => String, { nullable: true }) typeName?: string;
  @Field(() => [String], { nullable: true }) tags?: string[];
  @Field(() => JSONObject, { nullable: true }) properties?: Record<string, unknown>;
}

@Authorized()
@Resolver()
export class ContentsResolver {
  @Query(() => ContentNode)
  async content(@Arg('repository', () => String) repository: string, @Arg('id', () => ID) id: string, @Ctx() context: RequestContext) {
    return getContent(await entryScope(context, repository), id);
  }

  @Mutation(() => ContentNode, { description: 'a new content, version 1.0, over an upload' })
  async createContent(
    @Arg('repository', () => String) repository: string,
    @Arg('input', () => CreateContentInput) input: CreateContentInput,
    @Ctx() context: RequestContext,
  ) {
    return createContent(await entryScope(context, repository), input);
  }
}
