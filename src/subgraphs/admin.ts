import { AuthResolver, GroupsResolver, UsersResolver } from '../modules/auth/index.js';
import { RepositoryAclResolver } from '../modules/access/index.js';
import { PoliciesResolver } from '../modules/policies/index.js';
import { RepositoriesResolver } from '../modules/repositories/index.js';
import { StatisticsResolver } from '../modules/repositories/index.js';
import { WebhooksResolver } from '../modules/webhooks/index.js';
import { buildFederatedSchema } from './federated-schema.js';

/** The administration domain: sessions, users, groups, repositories, policies and content types, webhooks. */
export const buildAdminSubgraph = () => buildFederatedSchema([AuthResolver, UsersResolver, GroupsResolver, RepositoriesResolver, StatisticsResolver, PoliciesResolver, RepositoryAclResolver, WebhooksResolver]);
