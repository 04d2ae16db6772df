import { Migration } from '@mikro-orm/migrations';
import { statementTransitions } from './Migration20261122270001EntryVisibleCounts.js';

/** A trigger's entry row `new` written to entry_visible_words with its words, ACL and owner (a row already there is replaced). */
const upsertEntryWords = `insert into entry_visible_words (entry_id, repository_id, entry_type, created_at, words, acl_id, owner)
  values (new.id, new.repository_id, new.entry_type, new.created_at, entry_words(new.name, new.resource_id), new.acl_id, new.owner)
  on conflict (entry_id) do update set words = excluded.words, acl_id = excluded.acl_id, owner = excluded.owner;`;

const shown = (row: string) => `(${row}.is_latest and ${row}.active and ${row}.version_status is distinct from 'WORKING_COPY')`;

/** entry_visible_words_update(): an entry no longer shown leaves entry_visible_words, else it is written anew — unless `branch` (an elsif) says otherwise. */
export const entryWordsUpdateFunction = (branch = '') => `
      create or replace function entry_visible_words_update() returns trigger language plpgsql as $$
      begin
        if not ${shown('new')} then
          delete from entry_visible_words where entry_id = old.id;
        ${branch}
        else
          ${upsertEntryWords}
        end if;
        return null;
      end $$;`;

const visible = `is_latest and active and version_status is distinct from 'WORKING_COPY'`;

/**
 * entry_visible_count_<event>(): the statement's net change of visible entries, added as rows by type and
 * ACL, and a fold now and then per repository changed (not per ACL: a statement may change many).
 * `more` keeps other figures in the same statement: its declarations and its part of the body.
 */
export const entryVisibleCountFunction = (event: string, sources: (typeof statementTransitions)[number]['sources'], more = { declare: '', body: '' }) => {
  const changes = sources.map(([table, sign]) => `select repository_id, entry_type, acl_id, ${sign} as d from ${table} where ${visible}`).join(' union all ');
  return `
        create or replace function entry_visible_count_${event}() returns trigger language plpgsql as $$
        declare
          repository text;${more.declare}
        begin
          for repository in
            with added as (
              insert into entry_visible_count (repository_id, entry_type, acl_id, n) select repository_id, entry_type, acl_id, sum(d) from (${changes}) change
                group by repository_id, entry_type, acl_id having sum(d) <> 0 returning repository_id)
            select distinct repository_id from added
          loop
            if random() < 0.02 then perform entry_visible_count_fold(repository); end if;
          end loop;${more.body}
          return null;
        end $$;`;
};

/**
 * Access control lists (DESIGN §10, docs/access-control.md).
 *
 * An ACL is a JSON object `{principal: level}` (1 read, 2 write, 3 all); jsonb keeps its keys in one
 * order, so equal ACLs have equal text and one digest. Each repository stores each distinct effective
 * ACL once (`acl`), with one `acl_grant` row per principal for the search's question "which ACLs may
 * this caller read" (an index range per principal).
 *
 * An entry keeps its own entries (`acl_own`) and whether it inherits (`acl_inherit`), and points at
 * its effective ACL (`acl_id`): its own entries merged with its folder's effective ACL (the
 * repository's root ACL at the top), unless it does not inherit or its folder has an inheritance
 * policy with `inheritAcl: false` assigned (then its own entries only). The pointer is computed when
 * the entry is inserted (a trigger: every insert path, bulk SQL included) and when it or an ancestor
 * changes (`acl_recompute`: one statement for a whole subtree), never per request.
 */
export class Migration20261127020000Acls extends Migration {
  override up(): void {
    this.addSql(`
      create table acl (
        id bigserial primary key,
        repository_id text not null references repository(id) on delete cascade,
        digest text not null,
        entries jsonb not null,
        unique (repository_id, digest)
      );`);
    this.addSql(`
      create table acl_grant (
        repository_id text not null,
        principal text not null,
        acl_id bigint not null references acl(id) on delete cascade,
        permission smallint not null check (permission between 1 and 3),
        primary key (repository_id, principal, acl_id)
      );`);
    this.addSql(`create index acl_grant_acl_idx on acl_grant (acl_id);`);
    this.addSql(`alter table repository add column acl jsonb not null default '{"EVERYONE": 3}'::jsonb;`);
    this.addSql(`alter table entry add column acl_inherit boolean not null default true, add column acl_own jsonb not null default '{}'::jsonb, add column acl_id bigint references acl(id);`);

    // the stored ACL with these entries in this repository, made when first needed
    this.addSql(`
      create function acl_id_for(repository text, entries jsonb) returns bigint language plpgsql as $$
      declare
        found bigint;
        key text := md5(entries::text);
      begin
        select id into found from acl where repository_id = repository and digest = key;
        if found is not null then return found; end if;
        insert into acl (repository_id, digest, entries) values (repository, key, entries)
          on conflict (repository_id, digest) do nothing returning id into found;
        if found is null then
          -- made by a concurrent transaction that committed meanwhile
          select id into found from acl where repository_id = repository and digest = key;
        else
          insert into acl_grant (repository_id, principal, acl_id, permission)
            select repository, g.key, found, g.value::smallint from jsonb_each_text(entries) g;
        end if;
        return found;
      end $$;`);
    // the higher permission of each principal of two ACLs
    this.addSql(`
      create function acl_merge(a jsonb, b jsonb) returns jsonb language sql immutable parallel safe as $$
        select case when a = '{}'::jsonb then b when b = '{}'::jsonb then a else
          (select coalesce(jsonb_object_agg(key, level), '{}'::jsonb)
             from (select key, max(value::int) as level from (select * from jsonb_each_text(a) union all select * from jsonb_each_text(b)) pairs group by key) merged)
        end $$;`);
    // a folder whose assigned inheritance policy says inheritAcl: false hands its ACL to nobody
    this.addSql(`
      create function acl_stops_at(folder text) returns boolean language sql stable parallel safe as $$
        select exists (select 1 from policy_assignment a join policy p on p.id = a.policy_id
                        where a.folder_id = folder and p.kind = 'INHERITANCE' and p.fields->>'inheritAcl' = 'false')
      $$;`);
    // what an entry under \`parent\` inherits (null: the repository's root)
    this.addSql(`
      create function acl_inherited(repository text, parent text) returns jsonb language sql stable parallel safe as $$
        select case
          when parent is null then (select r.acl from repository r where r.id = repository)
          when acl_stops_at(parent) then '{}'::jsonb
          else (select a.entries from entry f join acl a on a.id = f.acl_id where f.id = parent)
        end $$;`);
    // a new entry: a version takes its chronicle's ACL, anything else its folder's (unless its own are set)
    this.addSql(`
      create function entry_acl_on_insert() returns trigger language plpgsql as $$
      declare
        sibling record;
      begin
        if new.acl_id is not null then return new; end if;
        -- the folder's row is shared-locked: a change of its ACL (which locks the subtree's folders first) waits for this entry, or this entry for it
        if new.parent_id is not null then
          perform 1 from entry where id = new.parent_id for share;
          -- no such folder: the insert fails on its foreign key (a 404 to the caller); any ACL does till then
          if not found then new.acl_id := acl_id_for(new.repository_id, '{}'::jsonb); return new; end if;
        else perform 1 from repository where id = new.repository_id for share; end if;
        select acl_inherit, acl_own, acl_id into sibling from entry where chronical_id = new.chronical_id and id <> new.id and repository_id = new.repository_id limit 1;
        if found then
          new.acl_inherit := sibling.acl_inherit;
          new.acl_own := sibling.acl_own;
          new.acl_id := sibling.acl_id;
          return new;
        end if;
        if new.acl_inherit and new.acl_own = '{}'::jsonb and new.parent_id is not null and not acl_stops_at(new.parent_id) then
          select acl_id into new.acl_id from entry where id = new.parent_id;
          if new.acl_id is not null then return new; end if;
        end if;
        new.acl_id := acl_id_for(new.repository_id,
          case when new.acl_inherit then acl_merge(acl_inherited(new.repository_id, new.parent_id), new.acl_own) else new.acl_own end);
        return new;
      end $$;`);
    this.addSql(`create trigger entry_acl_on_insert before insert on entry for each row execute function entry_acl_on_insert();`);

    // The effective ACLs of \`roots\` and everything below them, again: after an ACL, a move, an
    // inheritance policy or the root ACL changed. The subtree's folders are locked first (a statement of
    // its own, so that the walk's snapshot comes after): an entry inserted into one of them meanwhile
    // either is committed before the walk sees the tree, or waits and then reads the new ACL (the insert
    // trigger shares its folder's lock). Returns how many entries changed.
    this.addSql(`
      create function acl_recompute(repository text, roots text[]) returns integer language plpgsql as $$
      declare
        changed integer;
      begin
        perform 1 from entry where id in (
          with recursive folders (id, depth) as (
            select id, 0 from entry where id = any(roots) and entry_type = 'FOLDER'
            union all select e.id, f.depth + 1 from entry e join folders f on e.parent_id = f.id where e.entry_type = 'FOLDER' and f.depth < 1001
          ) select id from folders) order by id for update;
        -- \`stops\`: whether the node hands nothing down, asked once per folder (not once per child)
        with recursive tree (id, entries, stops, depth) as (
          select e.id, case when e.acl_inherit then acl_merge(acl_inherited(e.repository_id, e.parent_id), e.acl_own) else e.acl_own end,
                 case when e.entry_type = 'FOLDER' then acl_stops_at(e.id) else false end, 0
            from entry e where e.id = any(roots) and e.repository_id = repository
          union all
          select c.id, case when c.acl_inherit and not t.stops then acl_merge(t.entries, c.acl_own) else c.acl_own end,
                 case when c.entry_type = 'FOLDER' then acl_stops_at(c.id) else false end, t.depth + 1
            from tree t join entry c on c.parent_id = t.id where t.depth < 1001
        ),
        distinct_acls as (select d.entries, acl_id_for(repository, d.entries) as acl_id from (select distinct entries from tree) d),
        updated as (
          update entry e set acl_id = a.acl_id from tree t join distinct_acls a on a.entries = t.entries
           where e.id = t.id and e.acl_id is distinct from a.acl_id returning 1
        )
        select count(*)::int into changed from updated;
        return changed;
      end $$;`);
    // A principal that goes (a deleted user or group) leaves every ACL: the root's and entries' own
    // entries lose it, and what they hand down is recomputed.
    this.addSql(`
      create function acl_remove_principal(principal text) returns void language plpgsql as $$
      declare
        r record;
      begin
        for r in select id from repository where acl ? principal loop
          update repository set acl = acl - principal where id = r.id;
          perform acl_recompute(r.id, array(select id from entry where repository_id = r.id and parent_id is null));
        end loop;
        for r in select repository_id, array_agg(id) as ids from entry where acl_own <> '{}'::jsonb and acl_own ? principal group by repository_id loop
          update entry set acl_own = acl_own - principal where id = any(r.ids);
          perform acl_recompute(r.repository_id, r.ids);
        end loop;
      end $$;`);
    this.addSql(`create function app_user_acl_removal() returns trigger language plpgsql as $$ begin perform acl_remove_principal(old.user_name); return null; end $$;`);
    this.addSql(`create trigger app_user_acl_removal after delete on app_user for each row execute function app_user_acl_removal();`);
    this.addSql(`create function user_group_acl_removal() returns trigger language plpgsql as $$ begin perform acl_remove_principal('group:' || old.name); return null; end $$;`);
    this.addSql(`create trigger user_group_acl_removal after delete on user_group for each row execute function user_group_acl_removal();`);

    // an inheritance policy assigned to a folder or taken off it (also when the policy or the folder goes):
    // what the folder hands down changes (a policy of another kind hands down no ACL)
    this.addSql(`
      create function policy_assignment_acl() returns trigger language plpgsql as $$
      declare
        assignment record;
      begin
        if tg_op = 'DELETE' then assignment := old; else assignment := new; end if;
        if not exists (select 1 from policy p where p.id = assignment.policy_id and p.kind <> 'INHERITANCE') then
          perform acl_recompute(assignment.repository_id, array[assignment.folder_id]);
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger policy_assignment_acl after insert or delete on policy_assignment for each row execute function policy_assignment_acl();`);

    // today's entries: every repository's root ACL (EVERYONE: all), which every entry inherits
    this.addSql(`update entry e set acl_id = root.acl_id from (select r.id, acl_id_for(r.id, r.acl) as acl_id from repository r) root where root.id = e.repository_id;`);
    this.addSql(`alter table entry alter column acl_id set not null;`);
    // folders whose inheritance policy already said inheritAcl: false hand their children nothing
    this.addSql(`
      select acl_recompute(a.repository_id, array_agg(a.folder_id)) from policy_assignment a join policy p on p.id = a.policy_id
       where p.kind = 'INHERITANCE' and p.fields->>'inheritAcl' = 'false' group by a.repository_id;`);
    // the subtree walk (and the parent's cascade) read children of every version
    this.addSql(`create index entry_parent_all_idx on entry (parent_id);`);
    // A caller who may not read the whole repository (docs/access-control.md, "why it scales"): its
    // visible entries are counted by index-only scans of its ACLs' ranges and of what it owns; the
    // file-size order pages with the ACL and owner in the index, so skipped rows are never read.
    this.addSql(`create index entry_visible_acl_idx on entry (repository_id, acl_id) include (entry_type, owner) where ${visible};`);
    this.addSql(`create index entry_visible_owner_idx on entry (repository_id, owner) include (entry_type, acl_id) where ${visible};`);
    this.addSql(`create index entry_visible_file_size_acl_idx on entry (repository_id, resource_file_size, id) include (entry_type, acl_id, owner) where ${visible};`);
    this.addSql(`drop index entry_visible_file_size_type_idx;`);
    // entries with own ACL entries: where a principal that goes is looked for
    this.addSql(`create index entry_own_acl_idx on entry (repository_id) where acl_own <> '{}'::jsonb;`);

    // The maintained totals of visible entries count per ACL too: a caller's unfiltered count is the
    // sum over the ACLs it may read (and what it owns beyond them), not a visit of its entries.
    this.addSql(`alter table entry_visible_count add column acl_id bigint;`);
    this.addSql(`delete from entry_visible_count;`);
    this.addSql(`insert into entry_visible_count (repository_id, entry_type, acl_id, n) select repository_id, entry_type, acl_id, count(*) from entry where ${visible} group by 1, 2, 3;`);
    this.addSql(`drop index entry_visible_count_idx;`);
    this.addSql(`create index entry_visible_count_idx on entry_visible_count (repository_id, entry_type, acl_id) include (n);`);
    this.addSql(`
      create or replace function entry_visible_count_fold(repository text) returns void language sql as $$
        with folded as (
          delete from entry_visible_count where ctid in (
            select ctid from entry_visible_count where repository_id = repository for update skip locked)
          returning entry_type, acl_id, n)
        insert into entry_visible_count (repository_id, entry_type, acl_id, n)
          select repository, entry_type, acl_id, sum(n) from folded group by entry_type, acl_id having sum(n) <> 0;
      $$;`);
    for (const { event, sources } of statementTransitions) this.addSql(entryVisibleCountFunction(event, sources));

    // The full-text words of visible entries carry their ACL and owner, so that a caller's words search
    // filters there (its page, its count) instead of joining every match back to the entry.
    this.addSql(`alter table entry_visible_words add column acl_id bigint, add column owner text;`);
    this.addSql(`update entry_visible_words w set acl_id = e.acl_id, owner = e.owner from entry e where e.id = w.entry_id;`);
    this.addSql(`
      create or replace function entry_visible_words_insert() returns trigger language plpgsql as $$
      begin
        ${upsertEntryWords}
        return null;
      end $$;`);
    // a change of the ACL or owner alone updates those two (the words are not made again)
    this.addSql(
      entryWordsUpdateFunction(`elsif ${shown('old')} and old.name is not distinct from new.name and old.resource_id is not distinct from new.resource_id then
          update entry_visible_words set acl_id = new.acl_id, owner = new.owner where entry_id = new.id;`),
    );
    this.addSql(`drop trigger entry_visible_words_update on entry;`);
    this.addSql(`
      create trigger entry_visible_words_update after update on entry for each row
      when (${shown('old')} is distinct from ${shown('new')} or (${shown('new')} and (old.name is distinct from new.name or old.resource_id is distinct from new.resource_id
            or old.acl_id is distinct from new.acl_id or old.owner is distinct from new.owner)))
      execute function entry_visible_words_update();`);
  }
}
