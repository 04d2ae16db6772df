import type { RestRoute } from '../route.js';
import { aclRoutes } from './acl.js';
import { adminRoutes } from './admin.js';
import { auditRoutes } from './audit.js';
import { checkRoutes } from './checks.js';
import { contentRoutes } from './contents.js';
import { conversionRoutes } from './conversion.js';
import { folderRoutes } from './folders.js';
import { fullTextRoutes } from './fulltext.js';
import { maintenanceRoutes } from './maintenance.js';
import { policyRoutes } from './policies.js';
import { searchRoutes } from './search.js';
import { sessionRoutes } from './session.js';
import { versionRoutes } from './versions.js';
import { webhookRoutes } from './webhooks.js';

/** The REST table: every path of the spec and DESIGN §4 but the byte transfer; each runs a GraphQL document, but the hot reads and the searches, which call their operation (docs/api.md). */
export const graphqlRoutes: RestRoute[] = [...sessionRoutes, ...folderRoutes, ...searchRoutes, ...contentRoutes, ...versionRoutes, ...maintenanceRoutes, ...conversionRoutes, ...adminRoutes, ...policyRoutes, ...checkRoutes, ...fullTextRoutes, ...aclRoutes, ...webhookRoutes, ...auditRoutes];
