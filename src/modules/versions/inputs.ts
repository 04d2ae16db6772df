import { Field, ID, InputType } from 'type-graphql';
import type { CheckInInput, ReplaceResourceInput } from './operations.js';

/* The GraphQL input types of the versioning verbs, over their inputs (see src/modules/entries/inputs.ts). */

@InputType('CheckInInput', { description: 'how checkIn makes the next version' })
export class CheckInInputNode implements CheckInInput {
  @Field(() => Boolean, { nullable: true, defaultValue: true, description: 'true: the next major version (2.0); false: the next minor one (1.1)' })
  major?: boolean | null;
  @Field(() => String, { nullable: true, description: "stored as the new version's comment" }) comment?: string | null;
  @Field(() => ID, { nullable: true, description: 'new bytes: the id answered by POST …/uploads; without it the version keeps its bytes' })
  uploadId?: string | null;
  @Field(() => String, { nullable: true, description: 'default: sniffed from the new bytes' }) mimeType?: string | null;
}

@InputType('ReplaceResourceInput', { description: 'the new bytes of replaceResource' })
export class ReplaceResourceInputNode implements ReplaceResourceInput {
  @Field(() => ID, { description: 'the id answered by POST …/uploads' }) uploadId!: string;
  @Field(() => String, { nullable: true, description: 'default: sniffed from the bytes' }) mimeType?: string | null;
}
