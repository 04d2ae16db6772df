import type { EntityClass, EntityManager } from '@mikro-orm/core';

/** An entity's fields as plain data under their property names (no unit of work, no entity class). */
export type PlainRecord<T> = { [K in keyof T as K extends string ? K : never]: T[K] };

export interface PlainSelect<T> {
  /** the select list over `alias`: every column under its property name */
  sql: string;
  /** turns a row of that select list into the record, in place (dates, numbers) */
  revive(row: Record<string, unknown>): PlainRecord<T>;
}

const selects = new Map<string, PlainSelect<unknown>>();

/**
 * How to read an entity's rows as plain records, from its metadata: read-only answers (a search page,
 * the nested fields of its entries) skip hydrating managed entities, which cost a good part of a page
 * over its SQL (docs/benchmarks.md). Dates travel as epoch milliseconds, numbers as float8 (a bigint
 * would come back as a string).
 */
export function plainSelect<T extends object>(em: EntityManager, entity: EntityClass<T>, alias: string): PlainSelect<T> {
  const meta = em.getMetadata().get(entity);
  const key = `${meta.className}:${alias}`;
  let select = selects.get(key) as PlainSelect<T> | undefined;
  if (!select) {
    const props = meta.props.filter((prop) => prop.fieldNames?.length === 1 && prop.persist !== false);
    const dates = props.filter((prop) => prop.runtimeType === 'Date').map((prop) => prop.name as string);
    const columns = props.map((prop) => {
      const column = `${alias}.${prop.fieldNames[0]}`;
      if (prop.runtimeType === 'Date') return `(extract(epoch from ${column}) * 1000)::float8 as "${prop.name}"`;
      if (prop.runtimeType === 'number') return `${column}::float8 as "${prop.name}"`;
      return `${column} as "${prop.name}"`;
    });
    select = {
      sql: columns.join(', '),
      revive: (row) => {
        for (const date of dates) if (row[date] !== null) row[date] = new Date(row[date] as number);
        return row as PlainRecord<T>;
      },
    };
    selects.set(key, select as PlainSelect<unknown>);
  }
  return select;
}
