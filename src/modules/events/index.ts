/** The events capability's face: the outbox every changing verb writes to, and the audit trail that reads it (DESIGN §11). */
export { auditEvents, removeExpiredEvents } from './audit.js';
export type { AuditEvent, AuditQuery } from './audit.js';
export { AuditResolver } from './audit.resolver.js';
export { administrationEventTypes, eventTypeDescriptions, eventTypes } from './event-types.js';
export type { EventType } from './event-types.js';
export { recordEntryEvent, recordEvent } from './record.js';
export type { EventInput } from './record.js';
