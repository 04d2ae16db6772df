import { useState } from 'preact/hooks';

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
