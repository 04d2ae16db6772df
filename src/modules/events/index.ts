/** The events capability's face: the outbox every changing verb writes to, the audit trail that reads it, and its live relay (DESIGN §11). */
export { auditEvents, removeExpiredEvents } from './audit.js';
export type { AuditQuery } from './audit.js';
export { AuditResolver } from './audit.resolver.js';
export { administrationEventTypes, eventTypeDescriptions, eventTypes } from './event-types.js';
export type { EventType } from './event-types.js';
export { recordEntryEvent, recordEvent } from './record.js';
export type { EventInput } from './record.js';
export { LiveEvents } from './live.js';
export { LiveEventsResolver } from './events.resolver.js';
export type { OutboxEvent } from './outbox.js';
