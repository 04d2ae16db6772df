/** The events capability's face: the outbox every changing verb writes to, and its live relay (DESIGN §11). */
export { eventTypeDescriptions, eventTypes } from './event-types.js';
export type { EventType } from './event-types.js';
export { recordEvent } from './record.js';
export type { EventInput } from './record.js';
export { LiveEvents } from './live.js';
export { LiveEventsResolver } from './events.resolver.js';
export type { OutboxEvent } from './outbox.js';
