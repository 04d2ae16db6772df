import { Migration } from '@mikro-orm/migrations';

/**
 * What an upload's first bytes say about a PDF travels with its extraction queue row (`pdf_mark`,
 * src/text/extract.ts `hasPdfMark`): the upload had them in memory, so the extraction tells a kind
 * it does not read (a binary upload) without opening the stored file again — an open, read and close
 * per upload on a file system, a download from S3. Null where the head was not at hand (a pending
 * upload claimed later, rows queued before): the extraction reads it from the file, as before.
 */
export class Migration20261207100000QueuedPdfMark extends Migration {
  override up(): void {
    this.addSql(`alter table text_extraction_queue add column pdf_mark boolean;`);
  }
}
