/** The webhooks capability's face (DESIGN §11): registrations, and the delivery rounds workers run. */
export { WebhooksResolver } from './webhooks.resolver.js';
export { deliverDue } from './delivery.js';
