import 'reflect-metadata';
import { constants } from 'node:os';
import { ConfigError, loadConfig } from '../src/config.js';
import { handleSignalsInstead } from '../src/db/embedded-postgres.js';
import { createLogger } from '../src/logger.js';
import { startWholeService } from './service.js';

/** Start: config → database → gateway → HTTP, per ROLE; SIGTERM/SIGINT/SIGHUP drain and stop. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.LOG_LEVEL);
  try {
    const service = await startWholeService(config, logger);
    let stopping = false;
    const shutdown = (signal: NodeJS.Signals) => {
      // a second signal ends the process at once, as it did when the first one's listener went with it
      if (stopping) process.exit(128 + constants.signals[signal]);
      stopping = true;
      logger.info({ signal }, 'shutting down');
      service.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    // the shutdown stops the embedded Postgres itself, after the requests it drains
    handleSignalsInstead(shutdown);
  } catch (error) {
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    logger.fatal({ err: error }, 'the service could not start');
    process.exit(1);
  }
}

await main();
