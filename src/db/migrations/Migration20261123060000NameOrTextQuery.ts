import { Migration } from '@mikro-orm/migrations';

/**
 * `name_or_text_query(q)`: the query matched by the name's words alone or by the text's words alone,
 * over entry_visible_words.words, where the name's lexemes carry weight A and the text's weight D
 * (Migration20261123050000EntryVisibleWords). Without it, the words of a query of several operands
 * could be found partly in the name and partly in the text there, while the general query (name
 * index or text index) never splits a query: `rareword extracted` answered 20 without `orderBy` and
 * 10 with it. Each operand of the query's text form (`'lexeme'` or `'lexeme':*`) is restricted to A,
 * then to D, and the two are OR-ed. A query of one operand is found either way and stays as it is,
 * so the GIN index needs no recheck of weights for it. Immutable: evaluated once per statement.
 */
export class Migration20261123060000NameOrTextQuery extends Migration {
  override up(): void {
    const weighted = (weight: string) => `regexp_replace(q::text, $re$('(?:[^']|'')*')(?::(\\*))?$re$, '\\1:\\2${weight}', 'g')::tsquery`;
    this.addSql(`
      create function name_or_text_query(q tsquery) returns tsquery language sql immutable parallel safe as
      $$ select case when numnode(q) <= 1 then q else ${weighted('A')} || ${weighted('D')} end $$;`);
  }
}
