import { Migration } from '@mikro-orm/migrations';

/**
 * Repository names and technical names unique whatever their case, as user names are: `r1` and `R1`
 * would be two content domains a client tells apart by case only. Created only where no such pair
 * exists already (a database that has one keeps starting; the pair is for its administrator to rename).
 */
export class Migration20261123070000RepositoryNamesIgnoreCase extends Migration {
  override up(): void {
    this.addSql(`
      do $$
      begin
        if not exists (select lower(name) from repository group by 1 having count(*) > 1) then
          create unique index repository_name_lower_unique on repository (lower(name));
        else
          raise warning 'repository names differing only in case exist: their uniqueness ignoring case is not enforced';
        end if;
        if not exists (select lower(technical_name) from repository group by 1 having count(*) > 1) then
          create unique index repository_technical_name_lower_unique on repository (lower(technical_name));
        else
          raise warning 'repository technical names differing only in case exist: their uniqueness ignoring case is not enforced';
        end if;
      end $$;`);
  }
}
