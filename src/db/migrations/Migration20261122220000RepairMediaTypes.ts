import { Migration } from '@mikro-orm/migrations';
import { fallbackMediaType, maxMediaTypeLength, mediaTypePattern } from '../../modules/entries/media-types.js';

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * Media types were stored unchecked (a client's `text/html\r\nSet-Cookie: …` made every download of
 * that content a 500). Values the rule of media-types.ts refuses become application/octet-stream.
 */
export const repairMediaTypesSql = `update resource set mime_type = ${literal(fallbackMediaType)}
  where mime_type !~ '^[ -~]*$' or length(btrim(mime_type)) > ${maxMediaTypeLength} or btrim(mime_type) !~ ${literal(mediaTypePattern)}`;

export class Migration20261122220000RepairMediaTypes extends Migration {
  override up(): void {
    this.addSql(repairMediaTypesSql);
  }
}
