import { AuthResolver, UsersResolver } from '../modules/auth/auth.resolver.js';
import { PoliciesResolver } from '../modules/policies/policies.resolver.js';
import { RepositoriesResolver } from '../modules/repositories/repositories.resolver.js';
import { StatisticsResolver } from '../modules/repositories/statistics.resolver.js';
import { buildFederatedSchema } from './federated-schema.js';

/** The administration domain: sessions, users, repositories, policies and content types. */
export const buildAdminSubgraph = () => buildFederatedSchema([AuthResolver, UsersResolver, RepositoriesResolver, StatisticsResolver, PoliciesResolver]);
