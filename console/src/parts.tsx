import { useCallback, useEffect, useState } from 'preact/hooks';
import { gql } from './api.js';

/** A one-field form that names something new (a folder, a group); emptied once `onName` succeeds. */
export function NameForm({ label, action, onName }: { label: string; action: string; onName: (name: string) => Promise<boolean> }) {
  const [name, setName] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    if (await onName(name)) setName('');
  };
  return (
    <form class="inline" onSubmit={submit}>
      <label>
        {label}
        <input value={name} required onInput={(event) => setName(event.currentTarget.value)} />
      </label>
      <button type="submit">{action}</button>
    </form>
  );
}

/** A table's header row; columns marked wide hide below 700 px. */
export function TableHead({ columns }: { columns: (string | { name: string; wide?: boolean; hidden?: boolean })[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => {
          const { name, wide, hidden } = typeof column === 'string' ? { name: column } : column;
          return (
            <th scope="col" class={wide ? 'wide' : undefined}>
              {hidden ? <span class="visually-hidden">{name}</span> : name}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

/** The action's answer, or undefined once `onError` was told its message. */
export const run = async <T,>(action: () => Promise<T>, onError: (message: string) => void): Promise<T | undefined> => {
  try {
    return await action();
  } catch (failure) {
    onError((failure as Error).message);
    return undefined;
  }
};

/** A list a query answers as `list`, loaded at once; the second value loads it again. */
export function useList<T>(query: string, onError: (message: string) => void, variables: Record<string, unknown> = {}): [T[], () => Promise<void>] {
  const [list, setList] = useState<T[]>([]);
  const key = JSON.stringify(variables);
  const load = useCallback(async () => {
    const answer = await run(() => gql<{ list: T[] }>(query, variables), onError);
    if (answer) setList(answer.list);
  }, [query, key]);
  useEffect(() => void load(), [load]);
  return [list, load];
}
