import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { projectRoot } from '../paths.js';
import { buildSubgraphs, composeSupergraph, subgraphNames } from './index.js';

/** What `schema/` must hold: each subgraph's SDL and the composed supergraph. */
export async function schemaFiles(): Promise<Record<string, string>> {
  const subgraphs = await buildSubgraphs();
  const files: Record<string, string> = {};
  for (const name of subgraphNames) files[`${name}.graphql`] = `${subgraphs[name].sdl.trim()}\n`;
  files['supergraph.graphql'] = `${composeSupergraph(subgraphs).trim()}\n`;
  return files;
}

// `npm run schema` writes them
if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  for (const [file, text] of Object.entries(await schemaFiles())) {
    await writeFile(path.join(projectRoot, 'schema', file), text);
    process.stdout.write(`wrote schema/${file}\n`);
  }
}
