/**
 * `?` placeholders (as em.execute takes them) become Postgres' `$1, $2, …`, for statements sent to the
 * driver directly: the values travel apart from the SQL text. The text must hold no other `?`.
 */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
