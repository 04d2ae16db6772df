import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newContent } from '../helpers/entries.js';
import { startTestService, subscriptionEvents, type TestService } from '../helpers/service.js';

/**
 * Issue 30, item 6: what one session and one client address may hold open on the gateway — graphql-ws
 * sockets, and operations under way across sockets and SSE — and the shortest interval a subscription
 * may ask for. `bounded` runs with small bounds (each test gives back what it opened); `service` with
 * the defaults, for the review's flood.
 */
let bounded: TestService;
let service: TestService;

const bounds = {
  SUBSCRIPTION_MAX_SOCKETS_PER_SESSION: '3',
  SUBSCRIPTION_MAX_SOCKETS_PER_ADDRESS: '5',
  SUBSCRIPTION_MAX_OPERATIONS_PER_SESSION: '6',
  SUBSCRIPTION_MAX_OPERATIONS_PER_ADDRESS: '10',
};

beforeAll(async () => {
  [bounded, service] = await Promise.all([startTestService(bounds), startTestService()]);
});
afterAll(() => Promise.all([bounded?.stop(), service?.stop()]));
// a client's close reaches the server a moment later: the next test starts once it was counted off
afterEach(() => new Promise((resolve) => setTimeout(resolve, 300)));

const quiet = 'subscription { healthChanges(intervalMs: 60000) { status } }';

interface Socket {
  /** acknowledged, or closed by the server first (with its code and reason) */
  outcome: { acknowledged: true } | { closed: { code: number; reason: string } };
  /** a subscription: its first event or its error */
  subscribe(query?: string): { first: Promise<{ event?: unknown; error?: unknown }>; stop: () => void };
  close(): Promise<void>;
}

/** A graphql-ws connection of `session`, once the server acknowledged or closed it. */
async function openSocket(target: TestService, session: string): Promise<Socket> {
  const { createClient } = await import('graphql-ws');
  const { default: WebSocket } = await import('ws');
  let settle: (outcome: Socket['outcome']) => void = () => undefined;
  const settled = new Promise<Socket['outcome']>((resolve) => (settle = resolve));
  const client: Client = createClient({
    url: `${target.baseUrl.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${session}` },
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => undefined,
    on: {
      connected: () => settle({ acknowledged: true }),
      closed: (event) => settle({ closed: { code: (event as CloseEvent).code, reason: (event as CloseEvent).reason } }),
    },
  });
  const outcome = await settled;
  return {
    outcome,
    subscribe(query = quiet) {
      let report: (outcome: { event?: unknown; error?: unknown }) => void = () => undefined;
      const first = new Promise<{ event?: unknown; error?: unknown }>((resolve) => (report = resolve));
      const stop = client.subscribe({ query }, { next: (event) => report({ event }), error: (error) => report({ error }), complete: () => undefined });
      return { first, stop };
    },
    close: () => client.dispose() as Promise<void>,
  };
}

/** Opens `count` subscriptions on `socket` and asserts each got its first event. */
async function subscribeMany(socket: Socket, count: number) {
  const subscriptions = Array.from({ length: count }, () => socket.subscribe());
  for (const subscription of subscriptions) expect((await subscription.first).event).toBeDefined();
  return subscriptions;
}

/** An SSE subscription of `session`: open once its first event came, or the refusal (status and body). */
async function openStream(target: TestService, session: string) {
  const controller = new AbortController();
  const response = await fetch(`${target.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${session}` },
    body: JSON.stringify({ query: quiet }),
    signal: controller.signal,
  });
  if (response.status !== 200) return { status: response.status, body: (await response.json()) as { errors: { message: string; extensions: unknown }[] }, close: () => undefined };
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('"healthChanges"')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  expect(text).toContain('"status":"ok"');
  return { status: 200, body: undefined, close: () => controller.abort() };
}

/** What a refused subscribe answers: 429 tooManyRequests, saying what to do. */
const tooManyOperations = (message: RegExp) => ({ message: expect.stringMatching(message), extensions: expect.objectContaining({ reasonCode: 'tooManyRequests', status: 429 }) });

/** Retries `attempt` until it holds (a closed socket is counted off when the server has seen it close). */
async function eventually<T>(attempt: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  const until = Date.now() + 5_000;
  for (;;) {
    const value = await attempt();
    if (holds(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('graphql-ws sockets per session', () => {
  it('refuses a socket beyond SUBSCRIPTION_MAX_SOCKETS_PER_SESSION with close code 4429 and a reason; another session still connects; a closed one makes room', async () => {
    const session = await bounded.createUserSession('sockets-per-session');
    const other = await bounded.createUserSession('sockets-other-session');
    const open = await Promise.all([1, 2, 3].map(() => openSocket(bounded, session)));
    const opened: Socket[] = [...open];
    try {
      expect(open.map((socket) => socket.outcome)).toEqual([{ acknowledged: true }, { acknowledged: true }, { acknowledged: true }]);
      const refused = await openSocket(bounded, session);
      expect(refused.outcome).toEqual({ closed: { code: 4429, reason: expect.stringMatching(/session has 3 .*at most 3/) } });
      const another = await openSocket(bounded, other);
      opened.push(another);
      expect(another.outcome).toEqual({ acknowledged: true });
      await open[0]!.close();
      const again = await eventually(() => openSocket(bounded, session), (socket) => 'acknowledged' in socket.outcome);
      opened.push(again);
      expect(again.outcome).toEqual({ acknowledged: true });
    } finally {
      await Promise.all(opened.map((socket) => socket.close()));
    }
  });
});

describe('operations per session, across graphql-ws sockets and SSE', () => {
  it('takes SUBSCRIPTION_MAX_OPERATIONS_PER_SESSION in all; beyond, a subscribe gets 429 tooManyRequests and an SSE request a 429; completing one makes room', async () => {
    const session = await bounded.createUserSession('operations-per-session');
    const [first, second] = await Promise.all([openSocket(bounded, session), openSocket(bounded, session)]);
    const streams: { close: () => void }[] = [];
    try {
      const onFirst = await subscribeMany(first!, 3);
      await subscribeMany(second!, 2);
      const stream = await openStream(bounded, session);
      streams.push(stream);
      expect(stream.status).toBe(200);
      // six under way: the seventh is refused on either socket and over SSE
      expect((await second!.subscribe().first).error).toEqual([tooManyOperations(/session has 6 .*at most 6/)]);
      const refusedStream = await openStream(bounded, session);
      expect(refusedStream.status).toBe(429);
      expect(refusedStream.body?.errors).toEqual([tooManyOperations(/session has 6 .*at most 6/)]);
      // a completed subscription and a closed stream are counted off
      onFirst[0]!.stop();
      expect((await eventually(() => second!.subscribe().first, (outcome) => outcome.event !== undefined)).event).toBeDefined();
      stream.close();
      onFirst[1]!.stop();
      const reopened = await eventually(() => openStream(bounded, session), (opened) => opened.status === 200);
      streams.push(reopened);
      expect(reopened.status).toBe(200);
      // a socket's close gives back its operations
      await first!.close();
      const third = await openSocket(bounded, session);
      await subscribeMany(third, 1);
      await third.close();
    } finally {
      for (const stream of streams) stream.close();
      await Promise.all([first!.close(), second!.close()]);
    }
  });
});

describe('sockets and operations per client address', () => {
  it('refuses a socket beyond SUBSCRIPTION_MAX_SOCKETS_PER_ADDRESS whatever its session, with 4429', async () => {
    const sessions = await Promise.all(['address-a', 'address-b', 'address-c'].map((name) => bounded.createUserSession(name)));
    const opened = await Promise.all([sessions[0], sessions[0], sessions[0], sessions[1], sessions[1]].map((session) => openSocket(bounded, session!)));
    try {
      expect(opened.every((socket) => 'acknowledged' in socket.outcome)).toBe(true);
      const refused = await openSocket(bounded, sessions[2]!);
      expect(refused.outcome).toEqual({ closed: { code: 4429, reason: expect.stringMatching(/address has 5 .*at most 5/) } });
      await opened[4]!.close();
      const again = await eventually(() => openSocket(bounded, sessions[2]!), (socket) => 'acknowledged' in socket.outcome);
      opened.push(again);
      expect(again.outcome).toEqual({ acknowledged: true });
    } finally {
      await Promise.all(opened.map((socket) => socket.close()));
    }
  });

  it('takes SUBSCRIPTION_MAX_OPERATIONS_PER_ADDRESS across sessions; beyond, 429 on graphql-ws and SSE', async () => {
    const [full, partial] = await Promise.all(['address-ops-a', 'address-ops-b'].map((name) => bounded.createUserSession(name)));
    const [a, b] = await Promise.all([openSocket(bounded, full!), openSocket(bounded, partial!)]);
    try {
      await subscribeMany(a!, 6);
      const onB = await subscribeMany(b!, 4);
      // the second session has 4 of its 6: the address's 10 refuse it
      expect((await b!.subscribe().first).error).toEqual([tooManyOperations(/address has 10 .*at most 10/)]);
      const refusedStream = await openStream(bounded, partial!);
      expect(refusedStream.status).toBe(429);
      expect(refusedStream.body?.errors).toEqual([tooManyOperations(/address has 10 .*at most 10/)]);
      onB[0]!.stop();
      expect((await eventually(() => b!.subscribe().first, (outcome) => outcome.event !== undefined)).event).toBeDefined();
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });
});

describe('the shortest interval a subscription may ask for', () => {
  it('refuses healthChanges(intervalMs) below SUBSCRIPTION_MIN_INTERVAL_MS (1000 by default) with a 400 naming the minimum, and takes the minimum', async () => {
    for (const intervalMs of [100, 999]) {
      const { events } = await subscriptionEvents(service, `subscription { healthChanges(intervalMs: ${intervalMs}) { status } }`, 1);
      expect(events[0]?.errors?.[0], String(intervalMs)).toMatchObject({
        message: expect.stringContaining('at least 1000'),
        extensions: { reasonCode: 'illegalArguments', status: 400 },
      });
    }
    const { events } = await subscriptionEvents<{ healthChanges: { status: string } }>(service, 'subscription { healthChanges(intervalMs: 1000) { status } }', 2);
    expect(events.map((event) => event.data?.healthChanges.status)).toEqual(['ok', 'ok']);
  });
});

describe("the review's flood, at the default bounds", () => {
  it('one session asking for 20 sockets of 100 subscriptions gets 10 sockets and 100 operations; a 1 KB download stays fast; all of it is given back on close', async () => {
    const session = await service.createUserSession('flooding');
    const content = await newContent(service, { name: 'one-kilobyte.bin', bytes: 'x'.repeat(1024) });
    const downloadUrl = `${service.contentBase}/content/${content.id}/download?sessionId=${service.adminSession}`;
    const timeDownload = async () => {
      const started = performance.now();
      const response = await fetch(downloadUrl);
      expect((await response.arrayBuffer()).byteLength).toBe(1024);
      return performance.now() - started;
    };
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor((values.length - 1) / 2)]!;
    const alone: number[] = [];
    for (let i = 0; i < 10; i++) alone.push(await timeDownload());

    const sockets = await Promise.all(Array.from({ length: 20 }, () => openSocket(service, session)));
    try {
      const accepted = sockets.filter((socket) => 'acknowledged' in socket.outcome);
      expect(accepted).toHaveLength(10);
      for (const socket of sockets.filter((s) => !('acknowledged' in s.outcome))) expect(socket.outcome).toMatchObject({ closed: { code: 4429 } });
      const outcomes = await Promise.all(
        accepted.flatMap((socket) => Array.from({ length: 100 }, () => socket.subscribe('subscription { healthChanges(intervalMs: 1000) { status } }').first)),
      );
      expect(outcomes.filter((outcome) => outcome.event !== undefined)).toHaveLength(100);
      expect(outcomes.filter((outcome) => outcome.error !== undefined)).toHaveLength(900);
      // the review measured 5.8 s under 2,000 subscriptions every 100 ms; a generous bound for a loaded machine.
      // Three seconds of downloads are measured again (at most twice) before they fail it: the subscriptions'
      // cost is there each time, while a loaded machine's pause (838 ms once, against 93 alone, for a helper
      // running nine test files at once) comes and goes
      const bound = Math.max(200, 5 * median(alone));
      const downloadsFor3s = async (): Promise<number[]> => {
        const times: number[] = [];
        const until = performance.now() + 3_000;
        while (performance.now() < until) times.push(await timeDownload());
        console.log(`1 KB download ms: alone median ${median(alone).toFixed(1)}; during 100 health subscriptions every second, median ${median(times).toFixed(1)} (${times.length} downloads)`);
        return times;
      };
      let during = await downloadsFor3s();
      for (let again = 0; again < 2 && median(during) >= bound; again++) during = await downloadsFor3s();
      expect(median(during)).toBeLessThan(bound);
    } finally {
      await Promise.all(sockets.map((socket) => socket.close()));
    }
    // all given back: the session gets its 10 sockets again
    const again = await eventually(
      () => Promise.all(Array.from({ length: 10 }, () => openSocket(service, session))),
      (opened) => {
        const all = opened.every((socket) => 'acknowledged' in socket.outcome);
        if (!all) void Promise.all(opened.map((socket) => socket.close()));
        return all;
      },
    );
    try {
      expect(again.every((socket) => 'acknowledged' in socket.outcome)).toBe(true);
      await subscribeMany(again[0]!, 100);
    } finally {
      await Promise.all(again.map((socket) => socket.close()));
    }
  }, 120_000);
});
