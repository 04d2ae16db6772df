/** The repositories capability's face: what the rest of the service (HTTP, REST, GraphQL subgraphs, workers, tests) uses of it. */
export { currentRepository, ensureDefaultRepository, repositoryChangedChannel, repositoryNameOf } from './operations.js';
export { RepositoriesResolver } from './repositories.resolver.js';
export { RepositoryCache } from './repository-cache.js';
export { StatisticsResolver } from './statistics.resolver.js';
