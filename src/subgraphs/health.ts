import { ChecksResolver } from '../modules/health/checks.resolver.js';
import { DeepCheckResolver } from '../modules/health/deep-check.resolver.js';
import { HealthResolver } from '../modules/health/health.resolver.js';
import { buildFederatedSchema } from './federated-schema.js';

/** Health: readiness now and as a subscription; connection and deep checks of a repository. */
export const buildHealthSubgraph = () => buildFederatedSchema([HealthResolver, ChecksResolver, DeepCheckResolver]);
