import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Kind, parse, print, visit, type FragmentDefinitionNode } from 'graphql';
import { projectRoot } from '../src/paths.js';

const directory = path.join(projectRoot, 'rest-compat', 'operations');

const fragments = new Map(
  parse(readFileSync(path.join(directory, 'fragments.graphql'), 'utf8'))
    .definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
    .map((d) => [d.name.value, d]),
);

/** The fragments a document spreads, directly or through other fragments. */
function fragmentsUsedBy(text: string): FragmentDefinitionNode[] {
  const used = new Map<string, FragmentDefinitionNode>();
  const collect = (node: Parameters<typeof visit>[0]) =>
    visit(node, {
      FragmentSpread(spread) {
        const name = spread.name.value;
        const fragment = fragments.get(name);
        if (!fragment) throw new Error(`unknown fragment ${name}`);
        if (!used.has(name)) {
          used.set(name, fragment);
          collect(fragment);
        }
      },
    });
  collect(parse(text));
  return [...used.values()];
}

/**
 * The GraphQL document of each REST operation (`operations/<name>.graphql`) with the shared fragments
 * it uses appended. Read once at start.
 */
export const documents: ReadonlyMap<string, string> = new Map(
  readdirSync(directory)
    .filter((file) => file.endsWith('.graphql') && file !== 'fragments.graphql')
    .map((file) => {
      const text = readFileSync(path.join(directory, file), 'utf8');
      return [file.slice(0, -'.graphql'.length), [text, ...fragmentsUsedBy(text).map((f) => print(f))].join('\n')] as const;
    }),
);

export function documentFor(name: string): string {
  const document = documents.get(name);
  if (!document) throw new Error(`no GraphQL document rest-compat/operations/${name}.graphql`);
  return document;
}
