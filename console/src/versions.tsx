import { useCallback, useEffect, useState } from 'preact/hooks';
import { gql, upload } from './api.js';
import { useNotify } from './notifications.js';
import { TableHead } from './parts.js';

interface Version {
  id: string;
  version: string;
  versionStatus: string;
  comment?: string | null;
  lastModifiedAt: string;
  lastModifiedBy: string;
}

/** A content's version history, newest first, with check-out, check-in (new bytes optional) and cancel. */
export function VersionHistory({ repository, contentId, onChanged }: { repository: string; contentId: string; onChanged: () => void }) {
  const notify = useNotify();
  const [versions, setVersions] = useState<Version[]>([]);
  const [lockedBy, setLockedBy] = useState<string | null>();
  const [major, setMajor] = useState(true);
  const [comment, setComment] = useState('');
  const [file, setFile] = useState<File>();
  const load = useCallback(async () => {
    try {
      const answer = await gql<{ content: { lockedBy?: string | null }; versions: { entries: Version[] } }>(
        'query Versions($repository: String!, $id: ID!) { content(repository: $repository, id: $id) { lockedBy } versions(repository: $repository, id: $id) { entries { id ... on Content { version versionStatus comment lastModifiedAt lastModifiedBy } } } }',
        { repository, id: contentId },
      );
      setLockedBy(answer.content.lockedBy ?? null);
      setVersions(answer.versions.entries);
    } catch (failure) {
      notify({ kind: 'error', title: 'Versions unavailable', text: (failure as Error).message });
    }
  }, [repository, contentId]);
  useEffect(() => void load(), [load]);
  const act = (title: string, action: () => Promise<unknown>) => async (event?: Event) => {
    event?.preventDefault();
    try {
      await action();
      await load();
      onChanged();
    } catch (failure) {
      notify({ kind: 'error', title: `${title} failed`, text: (failure as Error).message });
    }
  };
  const variables = { repository, id: contentId };
  const checkOut = act('Check-out', () => gql('mutation CheckOut($repository: String!, $id: ID!) { checkOut(repository: $repository, id: $id) { id } }', variables));
  const cancel = act('Cancel check-out', () => gql('mutation Cancel($repository: String!, $id: ID!) { cancelCheckOut(repository: $repository, id: $id) { id } }', variables));
  const checkIn = act('Check-in', async () => {
    const uploadId = file ? await upload(repository, file, () => {}) : undefined;
    await gql('mutation CheckIn($repository: String!, $id: ID!, $input: CheckInInput) { checkIn(repository: $repository, id: $id, input: $input) { id } }', { ...variables, input: { major, comment: comment || undefined, uploadId } });
    setComment('');
    setFile(undefined);
  });
  return (
    <div>
      {lockedBy ? (
        <form class="inline" onSubmit={checkIn}>
          <span class="meta">Checked out by {lockedBy}.</span>
          <label>
            New bytes (optional)
            <input type="file" onChange={(event) => setFile(event.currentTarget.files?.[0])} />
          </label>
          <label>
            Comment
            <input value={comment} onInput={(event) => setComment(event.currentTarget.value)} />
          </label>
          <label class="check">
            <input type="checkbox" checked={major} onChange={(event) => setMajor(event.currentTarget.checked)} />
            Major version
          </label>
          <button type="submit">Check in</button>
          <button type="button" onClick={() => cancel()}>
            Cancel check-out
          </button>
        </form>
      ) : (
        <button type="button" onClick={() => checkOut()}>
          Check out
        </button>
      )}
      <div class="scroll">
        <table>
          <TableHead columns={['Version', 'Status', 'When', 'Who', { name: 'Comment', wide: true }]} />
          <tbody>
            {versions.map((version) => (
              <tr key={version.id}>
                <td>{version.version}</td>
                <td>{version.versionStatus}</td>
                <td>{new Date(version.lastModifiedAt).toLocaleString()}</td>
                <td>{version.lastModifiedBy}</td>
                <td class="wide">{version.comment ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
