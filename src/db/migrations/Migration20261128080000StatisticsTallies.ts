import { Migration } from '@mikro-orm/migrations';
import { statementTransitions } from './Migration20261122270001EntryVisibleCounts.js';

const MiB = 1024 * 1024;

/** The entries the statistics count: the latest version of each chronicle, a working copy not being one more. */
const counted = `is_latest and version_status is distinct from 'WORKING_COPY'`;

/** What one entry row adds to its repository's tally (spec "Repository statistics", contentStatistics). */
const entryFigures = `
  count(*) filter (where entry_type = 'CONTENT') as contents,
  count(*) filter (where entry_type = 'FOLDER') as folders,
  count(*) filter (where entry_type = 'CONTENT' and active) as active_contents,
  count(*) filter (where entry_type = 'FOLDER' and active) as active_folders,
  count(*) filter (where entry_type = 'CONTENT' and resource_file_size is not null) as sized,
  coalesce(sum(resource_file_size) filter (where entry_type = 'CONTENT'), 0) as size,
  count(*) filter (where entry_type = 'CONTENT' and resource_file_size is null) as residuals,
  count(*) filter (where entry_type = 'CONTENT' and resource_file_size < ${MiB}) as b0,
  count(*) filter (where entry_type = 'CONTENT' and resource_file_size >= ${MiB} and resource_file_size < ${10 * MiB}) as b1,
  count(*) filter (where entry_type = 'CONTENT' and resource_file_size >= ${10 * MiB} and resource_file_size < ${100 * MiB}) as b2,
  count(*) filter (where entry_type = 'CONTENT' and resource_file_size >= ${100 * MiB} and resource_file_size < ${1024 * MiB}) as b3,
  count(*) filter (where entry_type = 'CONTENT' and resource_file_size >= ${1024 * MiB}) as b4`;
const entryColumns = ['contents', 'folders', 'active_contents', 'active_folders', 'sized', 'size', 'residuals', 'b0', 'b1', 'b2', 'b3', 'b4'];

const representationColumns = ['representations', 'size', 'sources', 'source_sized', 'source_size'];

/**
 * Repository statistics kept incrementally (issue 27 item 6): the aggregate over every latest entry cost
 * p95 1,116 ms at 1,000,000 contents and grew with the repository. Now every statement that changes
 * entries or representations adds one row of its net change to a tally (insert only, as
 * entry_visible_count: concurrent writers never wait on a shared counter row), in the change's own
 * transaction; the figures are the sums. Now and then a change folds a repository's rows into one,
 * skipping rows another fold holds. Minima and maxima are not sums: they are read from the end of an
 * index (one probe each).
 *
 * Representations are counted per status; the "source representations" (the distinct entries that
 * have representations, with their sizes) are one row per source in representation_source, whose own
 * changes are tallied with status null.
 */
export class Migration20261128080000StatisticsTallies extends Migration {
  override up(): void {
    this.addSql(`create table entry_tally (repository_id text not null, ${entryColumns.map((c) => `${c} bigint not null`).join(', ')});`);
    this.addSql(`create index entry_tally_idx on entry_tally (repository_id);`);
    this.addSql(`insert into entry_tally select repository_id, ${entryFigures} from entry where ${counted} group by repository_id;`);
    this.addSql(`create index entry_counted_size_idx on entry (repository_id, resource_file_size) where ${counted} and entry_type = 'CONTENT';`);
    // the covering index of the aggregate the tallies replace: one index less for every change to keep
    this.addSql(`drop index entry_statistics_idx;`);

    this.addSql(`
      create table representation_tally (repository_id text not null, status text,
        ${representationColumns.map((c) => `${c} bigint not null`).join(', ')});`);
    this.addSql(`create index representation_tally_idx on representation_tally (repository_id);`);
    this.addSql(`create index representation_size_idx on representation (repository_id, file_size);`);
    this.addSql(`
      create table representation_source (
        entry_id text primary key references entry(id) on delete cascade,
        repository_id text not null,
        size bigint,
        representations bigint not null);`);
    this.addSql(`create index representation_source_size_idx on representation_source (repository_id, size);`);
    this.addSql(`
      insert into representation_source
      select r.source_entry_id, r.repository_id, e.resource_file_size, count(*)
        from representation r join entry e on e.id = r.source_entry_id group by 1, 2, 3;`);
    this.addSql(`
      insert into representation_tally
      select repository_id, status, count(*), coalesce(sum(file_size), 0), 0, 0, 0 from representation group by 1, 2
      union all
      select repository_id, null, 0, 0, count(*), count(size), coalesce(sum(size), 0) from representation_source group by 1;`);

    const fold = (table: string, columns: string[], groupBy: string[]) => `
      create function ${table}_fold(repository text) returns void language sql as $$
        with folded as (
          delete from ${table} where ctid in (
            select ctid from ${table} where repository_id = repository for update skip locked)
          returning *)
        insert into ${table} select repository${groupBy.map((g) => `, ${g}`).join('')}, ${columns.map((c) => `sum(${c})`).join(', ')}
          from folded group by ${['repository_id', ...groupBy].join(', ')}
          having ${columns.map((c) => `sum(${c}) <> 0`).join(' or ')};
      $$;`;
    this.addSql(fold('entry_tally', entryColumns, []));
    this.addSql(fold('representation_tally', representationColumns, ['status']));

    // Statement triggers with transition tables, as entry_visible_count's: one tally row per statement
    // and repository, whatever the number of rows it changed. A change that moves no figure adds nothing.
    const tallyTrigger = (table: string, tally: string, changes: (rows: string, sign: number) => string, columns: string[], groupBy: string[]) => {
      for (const { event, referencing, sources } of statementTransitions) {
        const keys = ['repository_id', ...groupBy].join(', ');
        this.addSql(`
          create function ${table}_tally_${event}() returns trigger language plpgsql as $$
          declare repository text;
          begin
            for repository in
              insert into ${tally} select ${keys}, ${columns.map((c) => `sum(${c})`).join(', ')}
                from (${sources.map(([rows, sign]) => changes(rows, sign)).join(' union all ')}) change
                group by ${keys} having ${columns.map((c) => `sum(${c}) <> 0`).join(' or ')}
                returning repository_id
            loop
              if random() < 0.02 then perform ${tally}_fold(repository); end if;
            end loop;
            return null;
          end $$;`);
        this.addSql(`create trigger ${table}_tally_${event} after ${event} on ${table} referencing ${referencing}
          for each statement execute function ${table}_tally_${event}();`);
      }
    };
    tallyTrigger(
      'entry',
      'entry_tally',
      (rows, sign) =>
        `select repository_id, ${entryColumns.map((c) => `${sign} * ${c} as ${c}`).join(', ')}
           from (select repository_id, ${entryFigures} from ${rows} where ${counted} group by repository_id) t`,
      entryColumns,
      [],
    );
    tallyTrigger(
      'representation',
      'representation_tally',
      (rows, sign) => `select repository_id, status, ${sign} as representations, ${sign} * file_size as size, 0 as sources, 0 as source_sized, 0 as source_size from ${rows}`,
      representationColumns,
      ['status'],
    );
    tallyTrigger(
      'representation_source',
      'representation_tally',
      (rows, sign) =>
        `select repository_id, null::text as status, 0 as representations, 0 as size, ${sign} as sources,
                ${sign} * (size is not null)::int as source_sized, ${sign} * coalesce(size, 0) as source_size from ${rows}`,
      representationColumns,
      ['status'],
    );

    // The sources: an entry is one while it has representations; its size follows its resource's.
    this.addSql(`
      create function representation_source_change() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into representation_source (entry_id, repository_id, size, representations)
          select n.source_entry_id, n.repository_id, e.resource_file_size, count(*)
            from new_rows n join entry e on e.id = n.source_entry_id group by 1, 2, 3
          on conflict (entry_id) do update set representations = representation_source.representations + excluded.representations;
        else
          update representation_source s set representations = s.representations - o.n
            from (select source_entry_id, count(*) as n from old_rows group by 1) o where s.entry_id = o.source_entry_id;
          delete from representation_source s where s.entry_id in (select source_entry_id from old_rows) and s.representations <= 0;
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger representation_source_insert after insert on representation referencing new table as new_rows
      for each statement execute function representation_source_change();`);
    this.addSql(`create trigger representation_source_delete after delete on representation referencing old table as old_rows
      for each statement execute function representation_source_change();`);
    this.addSql(`
      create function representation_source_size() returns trigger language plpgsql as $$
      begin
        update representation_source s set size = new.resource_file_size where s.entry_id = new.id;
        return null;
      end $$;`);
    this.addSql(`create trigger representation_source_size after update of resource_file_size on entry for each row
      when (old.resource_file_size is distinct from new.resource_file_size) execute function representation_source_size();`);

    for (const [table, tallies] of [
      ['entry', ['entry_tally']],
      ['representation', ['representation_tally', 'representation_source']],
    ] as const) {
      this.addSql(`create function ${table}_tallies_truncate() returns trigger language plpgsql as $$
        begin ${tallies.map((t) => `delete from ${t};`).join(' ')} return null; end $$;`);
      this.addSql(`create trigger ${table}_tallies_truncate after truncate on ${table} for each statement execute function ${table}_tallies_truncate();`);
    }
    // a repository is deleted empty: what is left of its tallies are rows that sum to nothing
    this.addSql(`
      create function repository_tallies_gone() returns trigger language plpgsql as $$
      begin
        delete from entry_tally where repository_id = old.id;
        delete from representation_tally where repository_id = old.id;
        return null;
      end $$;`);
    this.addSql(`create trigger repository_tallies_gone after delete on repository for each row execute function repository_tallies_gone();`);
  }
}
