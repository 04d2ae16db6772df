import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { buildAdminSubgraph } from './admin.js';
import { buildContentSubgraph } from './content.js';
import type { FederatedSchema } from './federated-schema.js';
import { buildHealthSubgraph } from './health.js';

export const subgraphNames = ['content', 'admin', 'health'] as const;
export type SubgraphName = (typeof subgraphNames)[number];

export async function buildSubgraphs(): Promise<Record<SubgraphName, FederatedSchema>> {
  // sequential: type-graphql builds from one global metadata store
  const content = await buildContentSubgraph();
  const admin = await buildAdminSubgraph();
  const health = await buildHealthSubgraph();
  return { content, admin, health };
}

/** Composes the supergraph; `urls` name where each subgraph listens in split mode. */
export function composeSupergraph(subgraphs: Record<SubgraphName, FederatedSchema>, urls: Partial<Record<SubgraphName, string>> = {}): string {
  const result = composeServices(
    subgraphNames.map((name) => ({ name, url: urls[name] ?? `inprocess://${name}`, typeDefs: parse(subgraphs[name].sdl) })),
  );
  if (result.errors) throw new Error(`supergraph composition failed:\n${result.errors.map((e) => e.message).join('\n')}`);
  return result.supergraphSdl;
}
