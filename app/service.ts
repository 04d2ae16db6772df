import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { startService, type RunningService, type ServiceParts } from '../src/service.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { consoleRouter } from '../src/http/console.js';
import { referencePageRouter } from '../rest-compat/reference-page.js';
import { restRouter } from '../rest-compat/router.js';
import { graphqlRoutes } from '../rest-compat/routes/index.js';
import { transferOperations } from '../rest-compat/transfer-paths.js';
import { projectRoot } from '../src/paths.js';
import { startWorkers } from '../workers/index.js';

/**
 * The whole service: the core of src/ with the REST compatibility layer beside the gateway and the
 * background workers. Composed here so that src/ imports neither. `moreRouters`: served after them
 * (a test's: the REST path the hot reads replaced, as their reference).
 */
export function startWholeService(config: Config, logger: Logger, moreRouters?: ServiceParts['gatewayRouters']): Promise<RunningService> {
  const { version } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string };
  return startService(config, logger, {
    gatewayRouters: (parts) => [
      restRouter({ ...parts, routes: graphqlRoutes, prefix: `${config.BASE_PATH}/api/v1`, otherOperations: transferOperations, version }),
      referencePageRouter(config.BASE_PATH),
      consoleRouter(config.BASE_PATH),
      ...(moreRouters?.(parts) ?? []),
    ],
    workers: startWorkers,
  });
}
