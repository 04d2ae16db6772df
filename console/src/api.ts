import { createClient, type Client } from 'graphql-ws';

/*
 * The console's only way to the service: the public GraphQL API at {base_url}/graphql (queries,
 * mutations; subscriptions over graphql-ws) and the byte transfer endpoints (upload, download). The
 * session id lives in this module's memory only: a reload signs out.
 */

/** `{base_url}`: the console is served at `{base_url}/console/`, whatever BASE_PATH is. */
export const baseUrl = `${location.origin}${location.pathname.replace(/\/console(\/.*)?$/, '')}`;

export interface GraphqlErrorInfo {
  message: string;
  reasonCode?: string;
  status?: number;
}

/** A failed operation: the first error's message and reason code (DESIGN §3). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly reasonCode?: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface Session {
  id: string;
  userName: string;
  roles: string[];
  groups: string[];
}

let current: Session | undefined;
let socket: Client | undefined;

export const session = (): Session | undefined => current;

export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...(current ? { authorization: `Bearer ${current.id}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json().catch(() => ({}))) as { data?: T; errors?: { message: string; extensions?: { reasonCode?: string; status?: number } }[] };
  const error = body.errors?.[0];
  if (error) throw new ApiError(error.message, error.extensions?.reasonCode, error.extensions?.status);
  if (!response.ok || !body.data) throw new ApiError(`the service answered ${response.status}`, undefined, response.status);
  return body.data;
}

export async function signIn(user: string, password: string): Promise<Session> {
  const { authenticate } = await gql<{ authenticate: string }>('mutation SignIn($user: String!, $password: String!) { authenticate(user: $user, password: $password) }', { user, password });
  current = { id: authenticate, userName: user, roles: [], groups: [] };
  try {
    const { me } = await gql<{ me: { userName: string; roles: string[]; groups: string[] } }>('query Me { me { userName roles groups } }');
    current = { id: authenticate, ...me };
  } catch (error) {
    current = undefined;
    throw error;
  }
  return current;
}

export async function signOut(): Promise<void> {
  try {
    await gql('mutation SignOut { logout }');
  } finally {
    current = undefined;
    await socket?.dispose();
    socket = undefined;
  }
}

function subscriptions(): Client {
  socket ??= createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    connectionParams: () => ({ authorization: `Bearer ${current?.id ?? ''}` }),
    lazy: true,
  });
  return socket;
}

/** Each event of a subscription until it ends; the answer stops it. */
export function subscribe<T>(query: string, variables: Record<string, unknown>, onData: (data: T) => void, onEnd: (error?: ApiError) => void): () => void {
  return subscriptions().subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        const error = result.errors?.[0] as { message: string; extensions?: { reasonCode?: string } } | undefined;
        if (error) onEnd(new ApiError(error.message, error.extensions?.reasonCode));
        else if (result.data) onData(result.data as T);
      },
      error: (error) => onEnd(new ApiError(error instanceof Error ? error.message : 'the subscription failed')),
      complete: () => onEnd(),
    },
  );
}

const contentDomain = (repository: string) => `${baseUrl}/api/v1/access.svc.content.${encodeURIComponent(repository)}/v1`;

/**
 * Streams a file to `POST C/uploads` (XMLHttpRequest: fetch reports no upload progress) and answers
 * the pending upload's id, which `createContent` turns into a content.
 */
export function upload(repository: string, file: File, onProgress: (fraction: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `${contentDomain(repository)}/uploads`);
    request.setRequestHeader('authorization', `Bearer ${current?.id ?? ''}`);
    request.responseType = 'json';
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      const body = request.response as { uploadId?: string; message?: string; reasonCode?: string } | null;
      if (request.status === 201 && body?.uploadId) resolve(body.uploadId);
      else reject(new ApiError(body?.message ?? `the upload failed (${request.status})`, body?.reasonCode, request.status));
    };
    request.onerror = () => reject(new ApiError('the upload failed: the connection broke'));
    const form = new FormData();
    form.append('file', file, file.name);
    request.send(form);
  });
}

/** The bytes at a transfer endpoint, fetched with the session in its header (never in the URL). */
async function fetchBlob(url: string, what: string): Promise<Blob> {
  const response = await fetch(new URL(url, location.href), { headers: { authorization: `Bearer ${current?.id ?? ''}` } });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { message?: string; reasonCode?: string };
    throw new ApiError(body.message ?? `the ${what} failed (${response.status})`, body.reasonCode, response.status);
  }
  return response.blob();
}

/** Fetches a download with the session in its header and hands it to the browser as a file. */
export async function download(downloadUrl: string, name: string): Promise<void> {
  const url = URL.createObjectURL(await fetchBlob(downloadUrl, 'download'));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** An image (thumbnail, page) fetched with the session, as an object URL the caller revokes. */
export async function imageUrl(url: string): Promise<string> {
  return URL.createObjectURL(await fetchBlob(url, 'image'));
}

/** The deep-check report (an HTML page), fetched with the session and shown from a blob. */
export async function fetchText(url: string): Promise<string> {
  const response = await fetch(new URL(url, location.href), { headers: { authorization: `Bearer ${current?.id ?? ''}` } });
  if (!response.ok) throw new ApiError(`the service answered ${response.status}`, undefined, response.status);
  return response.text();
}
