import { ChecksResolver } from '../modules/health/checks.resolver.js';
import { HealthResolver } from '../modules/health/health.resolver.js';
import { buildFederatedSchema } from './federated-schema.js';

/** Health: readiness now and as a subscription. */
export const buildHealthSubgraph = () => buildFederatedSchema([HealthResolver, ChecksResolver]);
