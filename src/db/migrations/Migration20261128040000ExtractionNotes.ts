import { Migration } from '@mikro-orm/migrations';

/**
 * What an extraction left out of a resource's text and why (DESIGN §12): a kind that is not read, a
 * page whose OCR went over its bound. The text is kept whatever the notes say.
 */
export class Migration20261128040000ExtractionNotes extends Migration {
  override up(): void {
    this.addSql(`alter table resource_text add column notes text[] not null default '{}';`);
  }
}
