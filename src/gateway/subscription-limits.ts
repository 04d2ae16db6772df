/** What one session and one client address may hold open on the gateway (docs/security.md). */
export interface SubscriptionBounds {
  /** graphql-ws sockets of one session */
  socketsPerSession: number;
  /** graphql-ws sockets from one client address, whatever their sessions */
  socketsPerAddress: number;
  /** operations under way for one session, across its sockets and SSE responses */
  operationsPerSession: number;
  /** operations under way from one client address */
  operationsPerAddress: number;
}

/** An open connection: a graphql-ws socket (its operations as graphql-ws counts them) or an SSE response (one operation). */
interface Holder {
  socket: boolean;
  operations: () => number;
}

/** A refusal, or the release of what was granted (once the connection has ended). */
export type Admission = { refused: string } | { release: () => void };

/** An accepted socket: its release, and the check of each operation it starts. */
export type SocketAdmission = { refused: string } | { release: () => void; operationRefused: () => string | undefined };

/**
 * Counts what each session (by its token hash) and each client address hold open: graphql-ws
 * sockets, and operations under way. A socket's operations are read from graphql-ws' own record of
 * them when asked, so an operation is counted exactly as long as graphql-ws runs it, however it ends;
 * an SSE response is one operation until it closes. One session opened 20 sockets with 2,000
 * subscriptions and slowed a 1 KB download from 20 ms to 5.8 s: the 100 operations a socket may carry
 * bound nothing across sockets.
 */
export class SubscriptionLimits {
  readonly #bounds: SubscriptionBounds;
  readonly #bySession = new Map<string, Set<Holder>>();
  readonly #byAddress = new Map<string, Set<Holder>>();

  constructor(bounds: Partial<SubscriptionBounds>) {
    this.#bounds = { socketsPerSession: Infinity, socketsPerAddress: Infinity, operationsPerSession: Infinity, operationsPerAddress: Infinity, ...bounds };
  }

  /** A graphql-ws socket whose session was verified; `operations` answers how many it has under way. */
  openSocket(session: string | undefined, address: string, operations: () => number): SocketAdmission {
    const holder: Holder = { socket: true, operations };
    const refused = this.#overBound(session, address, (holders) => count(holders, (h) => (h.socket ? 1 : 0)) + 1, 'connections', 'socketsPerSession', 'socketsPerAddress');
    if (refused) return { refused };
    return { release: this.#hold(session, address, holder), operationRefused: () => this.#operationsOver(session, address, 0) };
  }

  /** An SSE response: one operation while it is open. */
  openStream(session: string | undefined, address: string): Admission {
    const refused = this.#operationsOver(session, address, 1);
    if (refused) return { refused };
    return { release: this.#hold(session, address, { socket: false, operations: () => 1 }) };
  }

  /** `added`: operations not yet in the count (a socket's new operation is in graphql-ws' record already) */
  #operationsOver(session: string | undefined, address: string, added: number): string | undefined {
    return this.#overBound(session, address, (holders) => count(holders, (h) => h.operations()) + added, 'operations under way', 'operationsPerSession', 'operationsPerAddress');
  }

  #overBound(
    session: string | undefined,
    address: string,
    total: (holders: Set<Holder> | undefined) => number,
    what: string,
    perSession: keyof SubscriptionBounds,
    perAddress: keyof SubscriptionBounds,
  ): string | undefined {
    const bySession = session === undefined ? 0 : total(this.#bySession.get(session));
    if (bySession > this.#bounds[perSession]) return `Too many ${what}: this session has ${bySession - 1} (at most ${this.#bounds[perSession]}); close or complete one first.`;
    const byAddress = total(this.#byAddress.get(address));
    if (byAddress > this.#bounds[perAddress]) return `Too many ${what}: this address has ${byAddress - 1} (at most ${this.#bounds[perAddress]}); close or complete one first.`;
    return undefined;
  }

  #hold(session: string | undefined, address: string, holder: Holder): () => void {
    const entries: [Map<string, Set<Holder>>, string][] = [[this.#byAddress, address]];
    if (session !== undefined) entries.push([this.#bySession, session]);
    for (const [map, key] of entries) {
      const holders = map.get(key) ?? new Set<Holder>();
      map.set(key, holders.add(holder));
    }
    return () => {
      for (const [map, key] of entries) {
        const holders = map.get(key);
        holders?.delete(holder);
        if (holders?.size === 0) map.delete(key);
      }
    };
  }
}

function count(holders: Set<Holder> | undefined, of: (holder: Holder) => number): number {
  let sum = 0;
  for (const holder of holders ?? []) sum += of(holder);
  return sum;
}
