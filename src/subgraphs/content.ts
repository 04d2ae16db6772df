import { ConversionResolver } from '../modules/conversion/conversion.resolver.js';
import { ContentsResolver } from '../modules/entries/contents.resolver.js';
import { ContentResolver, EntryResolver, FolderChildrenResolver, FolderResolver } from '../modules/entries/entries.resolver.js';
import { ContentNode, FolderNode } from '../modules/entries/entry.types.js';
import { MaintenanceResolver } from '../modules/entries/maintenance.resolver.js';
import { FullTextResolver } from '../modules/fulltext/fulltext.resolver.js';
import { SearchResolver } from '../modules/search/search.resolver.js';
import { VersionsResolver } from '../modules/versions/versions.resolver.js';
import { buildFederatedSchema } from './federated-schema.js';

/** The content domain: folders, contents, versions, search, conversion jobs. */
export const buildContentSubgraph = () =>
  buildFederatedSchema([EntryResolver, ContentResolver, FolderChildrenResolver, FolderResolver, ContentsResolver, MaintenanceResolver, SearchResolver, VersionsResolver, ConversionResolver, FullTextResolver], [ContentNode, FolderNode]);
