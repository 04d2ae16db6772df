import { ChecksResolver } from '../modules/health/index.js';
import { DeepCheckResolver } from '../modules/health/index.js';
import { HealthResolver } from '../modules/health/index.js';
import { buildFederatedSchema } from './federated-schema.js';

/** Health: readiness now and as a subscription; connection and deep checks of a repository. */
export const buildHealthSubgraph = () => buildFederatedSchema([HealthResolver, ChecksResolver, DeepCheckResolver]);
