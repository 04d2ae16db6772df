import { Arg, Authorized, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { JSONObject } from '../../graphql/scalars.js';
import { findRepository } from './operations.js';
import { repositoryStatistics } from './statistics.js';

@ObjectType('StatisticsNotification', { description: 'something in the repository that may need attention' })
class NotificationNode {
  @Field(() => String, { description: 'what was found and what to do, as text' }) command!: string;
  @Field(() => Boolean, { description: 'true: somebody has to act; false: the service takes care of it' }) executeManually!: boolean;
}

@ObjectType('SizeDistribution', { description: 'residuals: contents without a resource or with an unknown size' })
class SizeDistributionNode {
  @Field(() => Int, { description: 'contents without a resource or with an unknown size' }) residuals!: number;
  @Field(() => Int, { description: 'contents under 1 MiB' }) size_0_1MB!: number;
  @Field(() => Int, { description: '1 MiB to under 10 MiB' }) size_1MB_10MB!: number;
  @Field(() => Int, { description: '10 MiB to under 100 MiB' }) size_10MB_100MB!: number;
  @Field(() => Int, { description: '100 MiB to under 1 GiB' }) size_100MB_1GB!: number;
  @Field(() => Int, { description: '1 GiB and more' }) size_1GB_10GB!: number;
}

@ObjectType('ContentStatistics', { description: 'figures of the content storage: the latest version of each content (a content counts once) and the folders' })
class ContentStatisticsNode {
  @Field(() => Int, { description: 'contents, active and deactivated' }) numberOfContents!: number;
  @Field(() => Int, { description: 'folders, active and deactivated' }) numberOfFolders!: number;
  @Field(() => Int, { description: 'active contents' }) numberOfActiveContents!: number;
  @Field(() => Int, { description: 'active folders' }) numberOfActiveFolders!: number;
  @Field(() => Int, { description: 'deactivated (restorable) contents' }) numberOfDeactivatedContents!: number;
  @Field(() => Int, { description: 'deactivated folders' }) numberOfDeactivatedFolders!: number;
  @Field(() => Number, { description: 'bytes' }) size!: number;
  @Field(() => Number, { description: 'bytes of the smallest content; 0 when there is none' }) minSize!: number;
  @Field(() => Number, { description: 'bytes of the largest content; 0 when there is none' }) maxSize!: number;
  @Field(() => Number, { description: 'bytes, the mean over the contents of known size; 0 when there is none' }) averageSize!: number;
  @Field(() => Date, { nullable: true, description: 'the last change of any entry; null when the repository is empty' }) lastModifiedAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'who made that change; null when the repository is empty' }) lastModifiedBy!: string | null;
  @Field(() => SizeDistributionNode, { description: 'contents by size (binary units: 1 MB = 1 MiB)' }) sizeDistribution!: SizeDistributionNode;
}

@ObjectType('CacheStatistics', { description: 'figures of the cache storage: the page images conversions drew, and the content versions they show (the sources)' })
class CacheStatisticsNode {
  @Field(() => Int, { description: 'content versions with page images' }) numberOfDocuments!: number;
  @Field(() => Int, { description: 'page images' }) numberOfPages!: number;
  @Field(() => Int, { description: 'page images (as numberOfPages)' }) numberOfRepresentations!: number;
  @Field(() => Int, { description: 'the sources: the content versions with page images, whose files the sourceRepresentations figures measure' }) numberOfSourceRepresentations!: number;
  @Field(() => Number, { description: 'bytes of all page images' }) representationsSize!: number;
  @Field(() => Number, { description: 'bytes of the smallest page image; 0 when there is none' }) representationsMinSize!: number;
  @Field(() => Number, { description: 'bytes of the largest page image; 0 when there is none' }) representationsMaxSize!: number;
  @Field(() => Number, { description: 'bytes, the mean size of a page image; 0 when there is none' }) representationsAverageSize!: number;
  @Field(() => Number, { description: "bytes of the sources' files" }) sourceRepresentationsSize!: number;
  @Field(() => Number, { description: "bytes of the smallest source's file; 0 when there is none" }) sourceRepresentationsMinSize!: number;
  @Field(() => Number, { description: "bytes of the largest source's file; 0 when there is none" }) sourceRepresentationsMaxSize!: number;
  @Field(() => Number, { description: "bytes, the mean size of a source's file; 0 when there is none" }) sourceRepresentationsAverageSize!: number;
  @Field(() => JSONObject, { description: 'representation status → count' }) representationsStatus!: Record<string, number>;
}

@ObjectType('RepositoryStatistics', { description: "a repository's figures, computed when asked (spec endpoint 13)" })
class RepositoryStatisticsNode {
  @Field(() => String, { description: "the repository's name" }) name!: string;
  @Field(() => String, { description: "the repository's technical name" }) repositoryTechnicalName!: string;
  @Field(() => String, { description: "the repository's type: STANDARD" }) type!: string;
  @Field(() => Date, { description: 'when the repository was created' }) createdAt!: Date;
  @Field(() => String, { description: 'who created the repository' }) createdBy!: string;
  @Field(() => Date, { description: 'when the repository last changed' }) modifiedAt!: Date;
  @Field(() => String, { description: 'who last changed the repository' }) modifiedBy!: string;
  @Field(() => Date, { description: 'when these figures were computed' }) executionDate!: Date;
  @Field(() => Int, { description: 'ms' }) duration!: number;
  @Field(() => [NotificationNode], { description: 'contents without a size, failed conversions and texts waiting for extraction, when there are any' })
  notifications!: NotificationNode[];
  @Field(() => ContentStatisticsNode, { description: 'folders and contents' }) contentStatistics!: ContentStatisticsNode;
  @Field(() => CacheStatisticsNode, { description: 'page images' }) cacheStatistics!: CacheStatisticsNode;
}

@Authorized('ADMIN')
@Resolver()
export class StatisticsResolver {
  @Query(() => RepositoryStatisticsNode, { description: 'spec endpoint 13' })
  async repositoryStatistics(@Arg('repositoryId', () => ID, { description: 'svc.repository.<name>' }) repositoryId: string, @Ctx() context: RequestContext) {
    return repositoryStatistics(context.em, await findRepository(context.services, context.em, { repositoryId }));
  }
}
