import type { EntityClass, EntityManager } from '@mikro-orm/core';

/** An entity's fields as plain data under their property names (no unit of work, no entity class). */
export type PlainRecord<T> = { [K in keyof T as K extends string ? K : never]: T[K] };

export interface PlainSelect<T> {
  /** the select list over `alias`: every column under its property name (after the prefix, if any) */
  sql: string;
  /** turns a row of that select list into the record, in place (dates, numbers) */
  revive(row: Record<string, unknown>): PlainRecord<T>;
  /** the record out of a wider row holding its columns (a join's), or null when its key is null (a left join that found none) */
  take(row: Record<string, unknown>): PlainRecord<T> | null;
}

const selects = new Map<string, PlainSelect<unknown>>();

/**
 * How to read an entity's rows as plain records, from its metadata: read-only answers (a search page,
 * the nested fields of its entries) skip hydrating managed entities, which cost a good part of a page
 * over its SQL (docs/benchmarks.md). Dates travel as epoch milliseconds, numbers as float8 (a bigint
 * would come back as a string).
 */
export function plainSelect<T extends object>(em: EntityManager, entity: EntityClass<T>, alias: string, prefix = ''): PlainSelect<T> {
  const meta = em.getMetadata().get(entity);
  const key = `${meta.className}:${alias}:${prefix}`;
  let select = selects.get(key) as PlainSelect<T> | undefined;
  if (!select) {
    const props = meta.props.filter((prop) => prop.fieldNames?.length === 1 && prop.persist !== false);
    // each field's column in the row and whether it is a date, worked out once: a page takes 300 records of ~25 fields
    const fields = props.map((prop) => ({ name: prop.name as string, column: `${prefix}${prop.name}`, isDate: prop.runtimeType === 'Date' }));
    const dateColumns = fields.filter((field) => field.isDate).map((field) => field.column);
    const columns = props.map((prop) => {
      const column = `${alias}.${prop.fieldNames[0]}`;
      const as = `"${prefix}${prop.name}"`;
      if (prop.runtimeType === 'Date') return `(extract(epoch from ${column}) * 1000)::float8 as ${as}`;
      if (prop.runtimeType === 'number') return `${column}::float8 as ${as}`;
      return `${column} as ${as}`;
    });
    const keyColumn = `${prefix}${meta.primaryKeys[0]}`;
    select = {
      sql: columns.join(', '),
      revive: (row) => {
        for (const column of dateColumns) if (row[column] !== null) row[column] = new Date(row[column] as number);
        return row as PlainRecord<T>;
      },
      take: (row) => {
        if (row[keyColumn] === null || row[keyColumn] === undefined) return null;
        const record: Record<string, unknown> = {};
        for (const { name, column, isDate } of fields) {
          const value = row[column];
          record[name] = isDate && value !== null ? new Date(value as number) : value;
        }
        return record as PlainRecord<T>;
      },
    };
    selects.set(key, select as PlainSelect<unknown>);
  }
  return select;
}
