import { Field, InputType, Int } from 'type-graphql';
import { graphqlEnum } from '../../graphql/enums.js';
import type { CreateRepositoryInput, LimitsInput, UpdateRepositoryLimitsInput } from './operations.js';
import { conversionLimits, conversionStrategies, type ConversionLimit as ConversionLimitValue, type ConversionStrategy as ConversionStrategyValue } from './repository.entity.js';

// each enum's name is its values' type too, as a TypeScript enum's is
export type ConversionLimit = ConversionLimitValue;
export type ConversionStrategy = ConversionStrategyValue;
export const ConversionLimit = graphqlEnum(conversionLimits, {
  name: 'ConversionLimit',
  description: 'share of the conversion object limit for PDF to image: 20, 50, 80, 100 %',
  valuesConfig: {
    LOW: { description: '20 % of the conversion limits' },
    MEDIUM: { description: '50 % of the conversion limits' },
    HIGH: { description: '80 % of the conversion limits' },
    UNLIMITED: { description: '100 % of the conversion limits (the default)' },
  },
});
export const ConversionStrategy = graphqlEnum(conversionStrategies, {
  name: 'ConversionStrategy',
  description: 'what happens when the object count exceeds the repository limit',
  valuesConfig: {
    LOW_PRIORITY: { description: 'the job goes back to the end of the queue with a lower priority once, then renders every page' },
    REPLACE: { description: 'each page over the limit is drawn as a placeholder page saying which limit' },
    ERROR: { description: 'the job fails (the default)' },
  },
});

/** Spec "Repository limits": each at most the conversion limit of the same name (CONV_MAX_*). */
@InputType('RepositoryLimitsInput', { description: 'limits of a conversion job in the repository: each at most the conversion limit of the same name (CONV_MAX_*)' })
export class RepositoryLimitsInputNode implements LimitsInput {
  @Field(() => Int, { nullable: true, description: 'input files per job, a whole number above 0' }) maxNumberOfInputFiles?: number | null;
  @Field(() => Number, { nullable: true, description: 'bytes' }) maxInputFileSize?: number | null;
  @Field(() => Number, { nullable: true, description: 'bytes' }) maxTotalInputFileSize?: number | null;
  @Field(() => ConversionLimit, { nullable: true, description: 'the share of the PDF object limits a job may use' }) conversionLimit?: ConversionLimit | null;
  @Field(() => ConversionStrategy, { nullable: true, description: 'what happens to a PDF over that share' }) conversionStrategy?: ConversionStrategy | null;
}

@InputType('CreateRepositoryInput', { description: 'a new repository' })
export class CreateRepositoryInputNode implements CreateRepositoryInput {
  @Field(() => String, { description: 'letters, digits, _ or -; the id is svc.repository.<name>' }) name!: string;
  @Field(() => String, { nullable: true, description: 'default: the name' }) technicalName?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'default: true' }) fullTextEnabled?: boolean | null;
  @Field(() => RepositoryLimitsInputNode, { nullable: true, description: 'default: none (the conversion limits apply)' }) limits?: RepositoryLimitsInputNode | null;
}

/** `PATCH A/repository/limits`: a limit given replaces the stored one, null unsets it, an absent one stays; `fullTextEnabled` changes when given. */
@InputType('UpdateRepositoryLimitsInput', { description: 'a limit given replaces the stored one, null unsets it, an absent one stays' })
export class UpdateRepositoryLimitsInputNode extends RepositoryLimitsInputNode implements UpdateRepositoryLimitsInput {
  @Field(() => Boolean, { nullable: true, description: 'switches full-text search on or off; absent or null: unchanged' }) fullTextEnabled?: boolean | null;
}
