/**
 * The messages a child process gets from its parent, kept in order until asked for (a job's start may
 * come before the child awaits it): the function answers the next one. Call once, at the child's start.
 */
export function parentMessages(): <T>() => Promise<T> {
  const inbox: unknown[] = [];
  let waiting: ((message: unknown) => void) | undefined;
  process.on('message', (message) => {
    const resolve = waiting;
    waiting = undefined;
    if (resolve) resolve(message);
    else inbox.push(message);
  });
  return <T>() => (inbox.length > 0 ? Promise.resolve(inbox.shift() as T) : new Promise<T>((resolve) => (waiting = resolve as (message: unknown) => void)));
}
