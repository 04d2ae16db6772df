/** The events capability's face: the outbox every changing verb writes to (DESIGN §11). */
export { eventTypeDescriptions, eventTypes } from './event-types.js';
export type { EventType } from './event-types.js';
export { recordEvent } from './record.js';
export type { EventInput } from './record.js';
