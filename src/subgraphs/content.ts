import { AclResolver, EntryAclResolver } from '../modules/access/index.js';
import { ConversionResolver } from '../modules/conversion/index.js';
import { ContentsResolver } from '../modules/entries/index.js';
import { ContentResolver, EntryResolver, FolderChildrenResolver, FolderResolver } from '../modules/entries/index.js';
import { ContentNode, FolderNode } from '../modules/entries/index.js';
import { MaintenanceResolver } from '../modules/entries/index.js';
import { AuditResolver, LiveEventsResolver } from '../modules/events/index.js';
import { FullTextResolver } from '../modules/fulltext/index.js';
import { SearchResolver } from '../modules/search/index.js';
import { VersionsResolver } from '../modules/versions/index.js';
import { buildFederatedSchema } from './federated-schema.js';

/** The content domain: folders, contents, versions, search, conversion jobs, the audit trail. */
export const buildContentSubgraph = () =>
  buildFederatedSchema([EntryResolver, ContentResolver, FolderChildrenResolver, FolderResolver, ContentsResolver, MaintenanceResolver, SearchResolver, VersionsResolver, ConversionResolver, FullTextResolver, AclResolver, EntryAclResolver, LiveEventsResolver, AuditResolver], [ContentNode, FolderNode]);
