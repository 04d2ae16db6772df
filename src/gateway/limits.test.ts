import { buildSchema, getOperationAST, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { graphqlLimits } from '../service.js';
import { createCostCheck } from './limits.js';

/** The cost bound of the service's limits, lowered to `maxCost`, over a schema of two sliced lists. */
const schema = buildSchema(`
  type Query { jobs(limit: Int): JobsPage!  search(options: Options): EntriesPage! }
  input Options { limit: Int }
  type JobsPage { count: Int! entries: [Job!]! }
  type EntriesPage { count: Int! entries: [Entry!]! }
  type Job { id: ID! }
  type Entry { id: ID! parent: Entry }
`);
const refused = (query: string, maxCost: number, variables: Record<string, unknown> = {}) => {
  const document = parse(query);
  return createCostCheck({ ...graphqlLimits, maxCost })(schema, document, getOperationAST(document)!, variables) !== undefined;
};

describe('the cost of a list sized by an argument', () => {
  it('counts a job list by its top-level limit (it counted as 10 whatever the limit)', () => {
    // 1 (the page) + 1000 jobs
    expect(refused('{ jobs(limit: 1000) { entries { id } } }', 1001)).toBe(false);
    expect(refused('{ jobs(limit: 1000) { entries { id } } }', 1000)).toBe(true);
    expect(refused('query($n: Int) { jobs(limit: $n) { entries { id } } }', 1000, { n: 1000 })).toBe(true);
    // no limit: the default page of 100; more than the field accepts: its maximum, 1000
    expect(refused('{ jobs { entries { id } } }', 101)).toBe(false);
    expect(refused('{ jobs { entries { id } } }', 100)).toBe(true);
    expect(refused('{ jobs(limit: 5000000) { entries { id } } }', 1001)).toBe(false);
  });

  it('counts an entry list by options.limit, as before', () => {
    // 1 + 1000 × (1 + 1)
    expect(refused('{ search(options: {limit: 1000}) { entries { id parent { id } } } }', 2001)).toBe(false);
    expect(refused('{ search(options: {limit: 1000}) { entries { id parent { id } } } }', 2000)).toBe(true);
  });
});
