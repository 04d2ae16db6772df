import type { Services } from '../src/context.js';
import { removeExpiredEvents } from '../src/modules/events/index.js';
import { startPeriodic, type BackgroundJob } from './periodic.js';

/**
 * Keeps the audit trail to AUDIT_RETENTION_DAYS (DESIGN §11): a minute after the start and then every
 * hour, the events older than that are removed. Several processes may run it: a removal is idempotent.
 */
export function startAuditRetention(services: Services, everyMs = 3_600_000, firstAfterMs = 60_000): BackgroundJob {
  return startPeriodic(
    services.logger,
    'audit-retention',
    everyMs,
    async () => {
      const removed = await removeExpiredEvents(services.orm.em.fork(), services.config.AUDIT_RETENTION_DAYS);
      if (removed > 0) services.logger.info({ removed, retentionDays: services.config.AUDIT_RETENTION_DAYS }, 'expired audit events removed');
    },
    firstAfterMs,
  );
}
