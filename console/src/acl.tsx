import { useEffect, useState } from 'preact/hooks';
import { gql } from './api.js';
import { TableHead } from './parts.js';
import type { EntryRow } from './entries.js';
import { useNotify } from './notifications.js';

interface AclEntry {
  principal: string;
  permission: 'read' | 'write' | 'all';
}
interface Acl {
  inherit: boolean;
  entries: AclEntry[];
  effective: (AclEntry & { inheritedFrom?: string | null })[];
}

const aclFields = 'inherit entries { principal permission } effective { principal permission inheritedFrom }';

/** An entry's own ACL entries (editable), whether it inherits, and the effective ACL with where each entry comes from. */
export function AclEditor({ repository, entry }: { repository: string; entry: EntryRow }) {
  const notify = useNotify();
  const [acl, setAcl] = useState<Acl>();
  const [own, setOwn] = useState<AclEntry[]>([]);
  const [inherit, setInherit] = useState(true);
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const show = (answer: Acl) => {
    setAcl(answer);
    setOwn(answer.entries);
    setInherit(answer.inherit);
  };
  useEffect(() => {
    gql<{ acl: Acl }>(`query Acl($repository: String!, $id: ID!, $entryType: EntryType) { acl(repository: $repository, id: $id, entryType: $entryType) { ${aclFields} } }`, { repository, id: entry.id, entryType: entry.entryType })
      .then(({ acl }) => show(acl))
      .catch((failure: Error) => setError(failure.message));
  }, [repository, entry.id]);
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const { setAcl: answer } = await gql<{ setAcl: Acl }>(
        `mutation SetAcl($repository: String!, $id: ID!, $entryType: EntryType, $input: AclInput!) { setAcl(repository: $repository, id: $id, entryType: $entryType, input: $input) { ${aclFields} } }`,
        { repository, id: entry.id, entryType: entry.entryType, input: { inherit, entries: own.filter((row) => row.principal.trim() !== '') } },
      );
      show(answer);
      setSaved(true);
    } catch (failure) {
      notify({ kind: 'error', title: 'Saving the ACL failed', text: (failure as Error).message });
    }
  };
  const change = (index: number, row: Partial<AclEntry>) => {
    setSaved(false);
    setOwn(own.map((each, at) => (at === index ? { ...each, ...row } : each)));
  };
  if (error) return <p class="error">{error}</p>;
  if (!acl) return <p>Loading…</p>;
  return (
    <form onSubmit={save} class="acl">
      <fieldset>
        <legend>Own entries</legend>
        {own.length === 0 && <p class="meta">No own entries.</p>}
        {own.map((row, index) => (
          <div class="inline acl-row">
            <label>
              Principal {index + 1}
              <input value={row.principal} placeholder="user, group:name or EVERYONE" onInput={(event) => change(index, { principal: event.currentTarget.value })} />
            </label>
            <label>
              Permission {index + 1}
              <select value={row.permission} onChange={(event) => change(index, { permission: event.currentTarget.value as AclEntry['permission'] })}>
                <option value="read">read</option>
                <option value="write">write</option>
                <option value="all">all</option>
              </select>
            </label>
            <button type="button" aria-label={`Remove entry ${index + 1}`} onClick={() => setOwn(own.filter((_, at) => at !== index))}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setOwn([...own, { principal: '', permission: 'read' }])}>
          Add entry
        </button>
        <label class="check">
          <input type="checkbox" checked={inherit} onChange={(event) => setInherit(event.currentTarget.checked)} />
          Inherit the folder's ACL
        </label>
      </fieldset>
      <button type="submit">Save ACL</button>
      {saved && (
        <span role="status" class="meta">
          {' '}
          Saved.
        </span>
      )}
      <h4>Effective</h4>
      <table>
        <TableHead columns={['Principal', 'Permission', 'From']} />
        <tbody>
          {acl.effective.map((row) => (
            <tr>
              <td>{row.principal}</td>
              <td>{row.permission}</td>
              <td>{row.inheritedFrom ?? 'own'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </form>
  );
}
