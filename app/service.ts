import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { startService, type RunningService } from '../src/service.js';
import { restRouter } from '../rest-compat/router.js';
import { graphqlRoutes } from '../rest-compat/routes/index.js';
import { startWorkers } from '../workers/index.js';

/**
 * The whole service: the core of src/ with the REST compatibility layer beside the gateway and the
 * background workers. Composed here so that src/ imports neither.
 */
export function startWholeService(config: Config, logger: Logger): Promise<RunningService> {
  return startService(config, logger, {
    gatewayRouters: ({ gateway, services, schemas }) => [
      restRouter({ gateway, services, schemas, routes: graphqlRoutes, prefix: `${config.BASE_PATH}/api/v1` }),
    ],
    workers: startWorkers,
  });
}
