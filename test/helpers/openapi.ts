import type { z } from 'zod';
import { mediaOf, openApiPath } from '../../rest-compat/openapi.js';
import { graphqlRoutes } from '../../rest-compat/routes/index.js';
import { errorResponseSchema } from '../../rest-compat/shapes/schemas.js';
import { transferOperations } from '../../rest-compat/transfer-paths.js';
import type { ResponseDeclaration } from '../../rest-compat/route.js';

/*
 * Every REST answer a test gets through `call` (service.ts) is checked against the OpenAPI document
 * the service serves: its status must be one the document declares for that path and method, and its
 * body must match the declared schema (the zod schema the document was made from). A drift between
 * the service and its document fails the test that saw it.
 */

/** Answered by the HTTP layer before any route (a method the path does not have, a body or coding it cannot read): docs/api.md. */
export const protocolStatuses = new Set([405, 411, 431, 501, 505]);

interface OpenApiDocument {
  servers: { url: string }[];
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
}

interface Operation {
  pattern: RegExp;
  /** template parameters: a literal path wins over a templated one (`content/search` over `content/{id}`) */
  templates: number;
  statuses: Set<number>;
  responses: Partial<Record<number, ResponseDeclaration>>;
}

const declaredResponses = new Map<string, Partial<Record<number, ResponseDeclaration>>>(
  [...graphqlRoutes, ...transferOperations].map((operation) => [`${operation.method} ${openApiPath(operation.path)}`, operation.responses]),
);

const documents = new Map<string, Promise<{ prefix: string; operations: Map<string, Operation[]> } | undefined>>();

async function loadDocument(origin: string, prefix: string) {
  const response = await fetch(`${origin}${prefix}/openapi.json`);
  // a service without the REST layer (a subgraph-only process)
  if (response.status !== 200) return undefined;
  const document = (await response.json()) as OpenApiDocument;
  const operations = new Map<string, Operation[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '[^/]+');
      const list = operations.get(method.toUpperCase()) ?? [];
      list.push({
        pattern: new RegExp(`^${source}$`),
        templates: (path.match(/\{/g) ?? []).length,
        statuses: new Set(Object.keys(operation.responses).map(Number)),
        responses: declaredResponses.get(`${method.toUpperCase()} ${path}`) ?? {},
      });
      operations.set(method.toUpperCase(), list);
    }
  }
  for (const list of operations.values()) list.sort((a, b) => a.templates - b.templates);
  return { prefix, operations };
}

/** The path as the router reads it; one that is no UTF-8 once decoded (a test of that 400) as it came. */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function problemsOf(schema: z.ZodType, body: unknown): string | undefined {
  const result = schema.safeParse(body);
  if (result.success) return undefined;
  return result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
}

/**
 * Throws when the answer to `method url` is not what the document declares: an undeclared status, or
 * a body its schema refuses. Paths outside `{base_url}/api/v1` and paths the document has not are left alone.
 */
export async function checkAnswer(method: string, url: string, answer: { status: number; body: unknown; contentType: string | null }): Promise<void> {
  const { origin, pathname } = new URL(url);
  const at = pathname.indexOf('/api/v1/');
  if (at < 0) return;
  const prefix = pathname.slice(0, at + '/api/v1'.length);
  const key = `${origin}${prefix}`;
  let loading = documents.get(key);
  if (!loading) documents.set(key, (loading = loadDocument(origin, prefix)));
  const document = await loading;
  if (!document) return;
  const path = decodedPath(pathname.slice(prefix.length));
  const operation = document.operations.get(method.toUpperCase())?.find((candidate) => candidate.pattern.test(path));
  if (!operation) return;
  const where = `${method.toUpperCase()} ${path}`;
  if (!operation.statuses.has(answer.status) && !protocolStatuses.has(answer.status)) {
    throw new Error(`${where} answered ${answer.status}, which the OpenAPI document does not declare (declared: ${[...operation.statuses].join(', ')}); body: ${JSON.stringify(answer.body)?.slice(0, 300)}`);
  }
  const declaration = answer.status >= 400 ? errorResponseSchema : operation.responses[answer.status];
  if (!declaration) return;
  const { type, schema } = mediaOf(declaration);
  if (type !== 'application/json' || !answer.contentType?.startsWith('application/json')) return;
  const problems = problemsOf(schema, answer.body);
  if (problems) throw new Error(`${where} answered ${answer.status} with a body its OpenAPI schema refuses: ${problems}; body: ${JSON.stringify(answer.body).slice(0, 500)}`);
}
