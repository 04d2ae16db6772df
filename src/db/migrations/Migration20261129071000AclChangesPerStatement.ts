import { Migration } from '@mikro-orm/migrations';
import { entryWordsUpdateFunction } from './Migration20261127020000Acls.js';
import { chronicleFollowFunction } from './Migration20261128150000EventTallies.js';

const shown = (row: string) => `(${row}.is_latest and ${row}.active and ${row}.version_status is distinct from 'WORKING_COPY')`;

/**
 * A change of many entries' effective ACLs (acl_recompute: a folder of 10,000 descendants moved or
 * given another ACL) costs one set of statements, not work per entry (issue 23 item 4: under 2 s).
 *
 * - entry_visible_words follows the entries' ACL and owner in one statement per statement on entry
 *   (`entry_visible_words_acl`), which also moves the words' counts (Migration20261128151000WordCountsPerAcl):
 *   one count row per word, ACL and entry type of the net change, instead of a row trigger on each
 *   entry's words row inserting its own rows. The row triggers keep the rest (visibility, name and
 *   text changes); the words' count row trigger now fires only for statements that set the words
 *   (or the repository or type), whose own upsert carries the ACL too.
 * - event_chronicle_follow_update finds the entries whose ACL changed by a set difference of the
 *   transition tables instead of joining them: a trigger function's statement is planned once per
 *   connection, for the rows of its first statement — a one-row update made it a nested loop, and
 *   10,000 changed entries then compared 10,000 × 10,000 rows (111–180 s of a move, docs/benchmarks.md).
 */
export class Migration20261129071000AclChangesPerStatement extends Migration {
  override up(): void {
    // rows the row trigger leaves to the statement trigger: visible before and after, same name and text
    this.addSql(entryWordsUpdateFunction());
    this.addSql(`drop trigger entry_visible_words_update on entry;`);
    this.addSql(`
      create trigger entry_visible_words_update after update on entry for each row
      when (${shown('old')} is distinct from ${shown('new')} or (${shown('new')} and (old.name is distinct from new.name or old.resource_id is distinct from new.resource_id)))
      execute function entry_visible_words_update();`);
    this.addSql(`drop trigger entry_visible_word_count_update on entry_visible_words;`);
    this.addSql(`
      create trigger entry_visible_word_count_update after update of repository_id, entry_type, words on entry_visible_words for each row
        when ((old.repository_id, old.entry_type, old.words, old.acl_id) is distinct from (new.repository_id, new.entry_type, new.words, new.acl_id))
        execute function entry_visible_word_count_change();`);
    // Every updated visible entry's words row gets its ACL and owner (a row the row trigger wrote already
    // has them: nothing to do), and the words' counts move from the ACL it had (\`was\`: the row as the
    // statement began) to the one it has, summed over the statement's entries.
    this.addSql(`
      create function entry_visible_words_acl() returns trigger language plpgsql as $$
      declare k record;
      begin
        for k in
          with moved as (
            update entry_visible_words w set acl_id = n.acl_id, owner = n.owner
              from new_rows n join entry_visible_words was on was.entry_id = n.id
             where w.entry_id = n.id and ${shown('n')} and (was.acl_id, was.owner) is distinct from (n.acl_id, n.owner)
            returning w.repository_id, w.entry_type, w.words, was.acl_id as acl_was, w.acl_id as acl_now),
          added as (
            insert into entry_visible_word_count (repository_id, word, entry_type, acl_id, n)
            select m.repository_id, word, m.entry_type, x.acl_id, sum(x.d)
              from moved m cross join lateral (values (m.acl_was, -1), (m.acl_now, 1)) x (acl_id, d) cross join unnest(tsvector_to_array(m.words)) word
             where m.acl_was is distinct from m.acl_now
             group by 1, 2, 3, 4 having sum(x.d) <> 0
            returning repository_id, acl_id, word)
          select repository_id, acl_id, array_agg(distinct word) as words from added group by 1, 2
        loop
          -- as the row trigger's: now and then, at most once a transaction, the rows of the words under one ACL folded
          if random() < 0.02 and current_setting('entry_visible_word_count.folded', true) is distinct from 'yes' then
            perform set_config('entry_visible_word_count.folded', 'yes', true);
            perform entry_visible_word_count_fold(k.repository_id, k.words, k.acl_id);
          end if;
        end loop;
        return null;
      end $$;`);
    this.addSql(`create trigger entry_visible_words_acl after update on entry referencing new table as new_rows for each statement execute function entry_visible_words_acl();`);

    this.addSql(
      chronicleFollowFunction(
        'update',
        `select repository_id, chronical_id from (
           select id, repository_id, chronical_id, acl_id from new_rows except select id, repository_id, chronical_id, acl_id from old_rows) changed`,
        { replace: true },
      ),
    );
  }
}
