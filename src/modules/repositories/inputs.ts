import { Field, InputType, Int, registerEnumType } from 'type-graphql';

export enum ConversionLimit {
  LOW = 'LOW',
  MEDIUM = 'MEDIUM',
  HIGH = 'HIGH',
  UNLIMITED = 'UNLIMITED',
}
export enum ConversionStrategy {
  LOW_PRIORITY = 'LOW_PRIORITY',
  REPLACE = 'REPLACE',
  ERROR = 'ERROR',
}
registerEnumType(ConversionLimit, { name: 'ConversionLimit', description: 'share of the conversion object limit for PDF to image: 20, 50, 80, 100 %' });
registerEnumType(ConversionStrategy, { name: 'ConversionStrategy', description: 'what happens when the object count exceeds the repository limit' });

/** Spec "Repository limits": each at most the conversion limit of the same name (CONV_MAX_*). */
@InputType('RepositoryLimitsInput')
export class RepositoryLimitsInput {
  @Field(() => Int, { nullable: true }) maxNumberOfInputFiles?: number | null;
  @Field(() => Number, { nullable: true, description: 'bytes' }) maxInputFileSize?: number | null;
  @Field(() => Number, { nullable: true, description: 'bytes' }) maxTotalInputFileSize?: number | null;
  @Field(() => ConversionLimit, { nullable: true }) conversionLimit?: ConversionLimit | null;
  @Field(() => ConversionStrategy, { nullable: true }) conversionStrategy?: ConversionStrategy | null;
}

@InputType('CreateRepositoryInput')
export class CreateRepositoryInput {
  @Field(() => String, { description: 'letters, digits, _ or -; the id is svc.repository.<name>' }) name!: string;
  @Field(() => String, { nullable: true, description: 'default: the name' }) technicalName?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'default: true' }) fullTextEnabled?: boolean | null;
  @Field(() => RepositoryLimitsInput, { nullable: true }) limits?: RepositoryLimitsInput | null;
}

/** `PATCH A/repository/limits`: a limit given replaces the stored one, null unsets it, an absent one stays; `fullTextEnabled` changes when given. */
@InputType('UpdateRepositoryLimitsInput')
export class UpdateRepositoryLimitsInput extends RepositoryLimitsInput {
  @Field(() => Boolean, { nullable: true }) fullTextEnabled?: boolean | null;
}
