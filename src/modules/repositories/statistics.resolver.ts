import { Arg, Authorized, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { JSONObject } from '../../graphql/scalars.js';
import { findRepository } from './operations.js';
import { repositoryStatistics } from './statistics.js';

@ObjectType('StatisticsNotification')
class NotificationNode {
  @Field(() => String) command!: string;
  @Field(() => Boolean) executeManually!: boolean;
}

@ObjectType('SizeDistribution', { description: 'residuals: contents without a resource or with an unknown size' })
class SizeDistributionNode {
  @Field(() => Int) residuals!: number;
  @Field(() => Int) size_0_1MB!: number;
  @Field(() => Int) size_1MB_10MB!: number;
  @Field(() => Int) size_10MB_100MB!: number;
  @Field(() => Int) size_100MB_1GB!: number;
  @Field(() => Int, { description: '1 GiB and more' }) size_1GB_10GB!: number;
}

@ObjectType('ContentStatistics')
class ContentStatisticsNode {
  @Field(() => Int) numberOfContents!: number;
  @Field(() => Int) numberOfFolders!: number;
  @Field(() => Int) numberOfActiveContents!: number;
  @Field(() => Int) numberOfActiveFolders!: number;
  @Field(() => Int) numberOfDeactivatedContents!: number;
  @Field(() => Int) numberOfDeactivatedFolders!: number;
  @Field(() => Number, { description: 'bytes' }) size!: number;
  @Field(() => Number) minSize!: number;
  @Field(() => Number) maxSize!: number;
  @Field(() => Number) averageSize!: number;
  @Field(() => Date, { nullable: true }) lastModifiedAt!: Date | null;
  @Field(() => String, { nullable: true }) lastModifiedBy!: string | null;
  @Field(() => SizeDistributionNode) sizeDistribution!: SizeDistributionNode;
}

@ObjectType('CacheStatistics')
class CacheStatisticsNode {
  @Field(() => Int) numberOfDocuments!: number;
  @Field(() => Int) numberOfPages!: number;
  @Field(() => Int) numberOfRepresentations!: number;
  @Field(() => Int) numberOfSourceRepresentations!: number;
  @Field(() => Number) representationsSize!: number;
  @Field(() => Number) representationsMinSize!: number;
  @Field(() => Number) representationsMaxSize!: number;
  @Field(() => Number) representationsAverageSize!: number;
  @Field(() => Number) sourceRepresentationsSize!: number;
  @Field(() => Number) sourceRepresentationsMinSize!: number;
  @Field(() => Number) sourceRepresentationsMaxSize!: number;
  @Field(() => Number) sourceRepresentationsAverageSize!: number;
  @Field(() => JSONObject, { description: 'representation status → count' }) representationsStatus!: Record<string, number>;
}

@ObjectType('RepositoryStatistics')
class RepositoryStatisticsNode {
  @Field(() => String) name!: string;
  @Field(() => String) repositoryTechnicalName!: string;
  @Field(() => String) type!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => String) createdBy!: string;
  @Field(() => Date) modifiedAt!: Date;
  @Field(() => String) modifiedBy!: string;
  @Field(() => Date) executionDate!: Date;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => [NotificationNode]) notifications!: NotificationNode[];
  @Field(() => ContentStatisticsNode) contentStatistics!: ContentStatisticsNode;
  @Field(() => CacheStatisticsNode) cacheStatistics!: CacheStatisticsNode;
}

@Authorized('ADMIN')
@Resolver()
export class StatisticsResolver {
  @Query(() => RepositoryStatisticsNode, { description: 'spec endpoint 13' })
  async repositoryStatistics(@Arg('repositoryId', () => ID) repositoryId: string, @Ctx() context: RequestContext) {
    return repositoryStatistics(context.em, await findRepository(context.services, context.em, { repositoryId }));
  }
}
