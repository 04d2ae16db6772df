import { Migration } from '@mikro-orm/migrations';

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

// the rule of src/modules/entries/media-types.ts as it was when this migration was written: a
// migration is history and keeps its own copy (the live rule may change, what this repaired may not)
const restrictedName = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}';
const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const mediaTypePattern = `^${restrictedName}/${restrictedName}( *; *${token}=(${token}|"[^"\\\\]*"))* *$`;
const maxMediaTypeLength = 255;
const fallbackMediaType = 'application/octet-stream';

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
