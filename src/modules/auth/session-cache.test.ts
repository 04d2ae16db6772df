import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SessionCache } from './session-cache.js';

const alice = { userName: 'alice', roles: ['USER' as const], groups: ['editors'] };
const bob = { userName: 'bob', roles: ['ADMIN' as const], groups: [] };

describe('SessionCache', () => {
  it('forgets one session, or every session of a user, and nobody else', () => {
    const cache = new SessionCache();
    cache.set('a1', alice, cache.mark());
    cache.set('a2', alice, cache.mark());
    cache.set('b1', bob, cache.mark());
    cache.forget('a1');
    expect(cache.get('a1')).toBeUndefined();
    expect(cache.get('a2')).toEqual(alice);
    cache.forgetUser('alice');
    expect([cache.get('a2'), cache.get('b1')]).toEqual([undefined, bob]);
  });

  it('forgets every session after notifications may have been missed (clear)', () => {
    const cache = new SessionCache();
    cache.set('a1', alice, cache.mark());
    cache.set('b1', bob, cache.mark());
    cache.clear();
    expect([cache.get('a1'), cache.get('b1')]).toEqual([undefined, undefined]);
  });

  it('keeps no principal read while something was forgotten (it may be the one from before the change)', () => {
    const cache = new SessionCache();
    for (const forgetting of [() => cache.forget('x'), () => cache.forgetUser('carol'), () => cache.clear()]) {
      const mark = cache.mark();
      forgetting();
      cache.set('a1', alice, mark);
      expect(cache.get('a1')).toBeUndefined();
    }
    cache.set('a1', alice, cache.mark());
    expect(cache.get('a1')).toEqual(alice);
  });

  it('holds an entry for its time to live only', async () => {
    const cache = new SessionCache(50);
    cache.set('a1', alice, cache.mark());
    expect(cache.get('a1')).toEqual(alice);
    await sleep(120);
    expect(cache.get('a1')).toBeUndefined();
  });

  it('holds an entry no longer than its session is valid, and none of a session past its expiry', async () => {
    const cache = new SessionCache(60_000);
    cache.set('a1', alice, cache.mark(), Date.now() + 50);
    cache.set('b1', bob, cache.mark(), Date.now() - 1);
    expect([cache.get('a1'), cache.get('b1')]).toEqual([alice, undefined]);
    await sleep(120);
    expect(cache.get('a1')).toBeUndefined();
  });

  it('drops the least recently used session when full', () => {
    const cache = new SessionCache(60_000, 2);
    cache.set('a1', alice, cache.mark());
    cache.set('b1', bob, cache.mark());
    cache.get('a1');
    cache.set('a2', alice, cache.mark());
    expect([cache.get('a1'), cache.get('b1'), cache.get('a2')]).toEqual([alice, undefined, alice]);
  });
});
