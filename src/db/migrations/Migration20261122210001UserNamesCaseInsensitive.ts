import { Migration } from '@mikro-orm/migrations';

/**
 * User names are unique without regard to case (`Alice` and `alice` are one user). Names are ASCII
 * (see normalizeUserName), so lower() is exact under any collation. Should two names differ only in
 * case already, the index fails and names both: rename one, then start again.
 */
export class Migration20261122210001UserNamesCaseInsensitive extends Migration {
  override up(): void {
    this.addSql(`create unique index app_user_name_lower_unique on app_user (lower(user_name));`);
  }
}
