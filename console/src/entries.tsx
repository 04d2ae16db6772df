import { useEffect, useState } from 'preact/hooks';
import { download, gql } from './api.js';
import { TableHead } from './parts.js';
import { AclEditor } from './acl.js';
import { AuditTrail } from './audit.js';
import { FolderSelect, useFolderChoices } from './folders.js';
import { useJobs } from './jobs.js';
import { useNotify } from './notifications.js';
import { PageViewer, SessionImage } from './pages.js';
import { VersionHistory } from './versions.js';

export interface EntryRow {
  id: string;
  /** the same for every version of a content: a row stays selected across a check-in */
  chronicalId: string;
  name: string;
  entryType: 'FOLDER' | 'CONTENT';
  lastModifiedAt: string;
  lastModifiedBy: string;
  tags: string[];
  version?: string;
  /** null until the preview job made it */
  thumbnailUrl?: string | null;
  resource?: { fileSize: number; mimeType: string; downloadUrl: string } | null;
}

export const entryFields = 'id chronicalId name entryType lastModifiedAt lastModifiedBy tags ... on Content { version thumbnailUrl resource { fileSize mimeType downloadUrl } }';

export const formatSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KB` : bytes < 1024 ** 3 ? `${(bytes / 1024 ** 2).toFixed(1)} MB` : `${(bytes / 1024 ** 3).toFixed(1)} GB`;

/** Text with every occurrence of the search words marked. */
export function Highlighted({ text, words }: { text: string; words: string[] }) {
  const wanted = words.filter((word) => word.length > 0).map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (wanted.length === 0) return <>{text}</>;
  const parts = text.split(new RegExp(`(${wanted.join('|')})`, 'gi'));
  return <>{parts.map((part, index) => (index % 2 === 1 ? <mark>{part}</mark> : part))}</>;
}

/** A folder or a page, drawn (no icon font, no emoji font needed); the row's text says which. */
function EntryIcon({ folder }: { folder: boolean }) {
  return (
    <svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
      {folder ? <path d="M1 3h5l1.5 1.5H15V13H1z" class="icon-folder" /> : <path d="M3 1h7l3 3v11H3z M10 1v3h3" class="icon-file" />}
    </svg>
  );
}

interface TableProps {
  repository: string;
  entries: EntryRow[];
  caption: string;
  highlight?: string[];
  onOpenFolder?: (entry: EntryRow) => void;
  onChanged: () => void;
}

/** Entries as a table; each row opens its folder or its details (access, audit trail, conversion). */
export function EntryTable({ repository, entries, caption, highlight = [], onOpenFolder, onChanged }: TableProps) {
  const [selected, setSelected] = useState<string>();
  const chosen = entries.find((entry) => entry.chronicalId === selected);
  // an entry that left the page (moved, deleted) is no longer selected: it does not come back open
  useEffect(() => {
    if (selected && !chosen) setSelected(undefined);
  }, [selected, chosen]);
  return (
    <>
      <div class="scroll">
        <table class="entries">
          <caption class="visually-hidden">{caption}</caption>
          <TableHead columns={['Name', { name: 'Modified', wide: true }, 'Size', { name: 'Actions', hidden: true }]} />
          <tbody>
            {entries.length === 0 && (
              <tr>
                <td colSpan={4}>Nothing here.</td>
              </tr>
            )}
            {entries.map((entry) => (
              <tr key={entry.id} class={entry.chronicalId === selected ? 'selected' : undefined}>
                <td>
                  {entry.thumbnailUrl ? <SessionImage url={entry.thumbnailUrl} alt="" class="thumb" /> : <EntryIcon folder={entry.entryType === 'FOLDER'} />}
                  {entry.entryType === 'FOLDER' && onOpenFolder ? (
                    <button type="button" class="link" onClick={() => onOpenFolder(entry)}>
                      <Highlighted text={entry.name} words={highlight} />
                    </button>
                  ) : (
                    <Highlighted text={entry.name} words={highlight} />
                  )}
                  {entry.tags.length > 0 && <span class="tags">{entry.tags.join(', ')}</span>}
                </td>
                <td class="wide">{new Date(entry.lastModifiedAt).toLocaleString()}</td>
                <td>{entry.resource ? formatSize(entry.resource.fileSize) : ''}</td>
                <td>
                  <button type="button" aria-expanded={entry.chronicalId === selected} aria-label={`Details of ${entry.name}`} onClick={() => setSelected(entry.chronicalId === selected ? undefined : entry.chronicalId)}>
                    Details
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {chosen && <EntryDetails key={chosen.chronicalId} repository={repository} entry={chosen} onChanged={onChanged} onClose={() => setSelected(undefined)} />}
    </>
  );
}

const tabs = { actions: 'Actions', versions: 'Versions', pages: 'Pages', access: 'Access', audit: 'Audit trail' } as const;
type Tab = keyof typeof tabs;

function EntryDetails({ repository, entry, onChanged, onClose }: { repository: string; entry: EntryRow; onChanged: () => void; onClose: () => void }) {
  const [tab, setTab] = useState<Tab>('actions');
  return (
    <section class="details" aria-labelledby="details-title">
      <div class="row">
        <h3 id="details-title">{entry.name}</h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <p class="meta">
        {entry.entryType === 'FOLDER' ? 'Folder' : `Content ${entry.version ?? ''} · ${entry.resource?.mimeType ?? ''}`} · last changed by {entry.lastModifiedBy}
      </p>
      <div role="tablist" aria-label="Entry details" class="tabs">
        {(Object.keys(tabs) as Tab[])
          .filter((name) => (name !== 'versions' && name !== 'pages') || entry.entryType === 'CONTENT')
          .map((name) => (
          <button type="button" role="tab" id={`tab-${name}`} aria-selected={tab === name} aria-controls={`panel-${name}`} onClick={() => setTab(name)}>
            {tabs[name]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === 'actions' && <EntryActions repository={repository} entry={entry} onChanged={onChanged} />}
        {tab === 'versions' && <VersionHistory repository={repository} contentId={entry.id} onChanged={onChanged} />}
        {tab === 'pages' && <PageViewer repository={repository} contentId={entry.id} name={entry.name} />}
        {tab === 'access' && <AclEditor repository={repository} entry={entry} />}
        {tab === 'audit' && <AuditTrail repository={repository} entryId={entry.id} />}
      </div>
    </section>
  );
}

function EntryActions({ repository, entry, onChanged }: { repository: string; entry: EntryRow; onChanged: () => void }) {
  const notify = useNotify();
  const { watch } = useJobs();
  const [name, setName] = useState(entry.name);
  const [format, setFormat] = useState('png');
  const [message, setMessage] = useState<string>();
  const folder = entry.entryType === 'FOLDER';
  const run = (what: string, action: () => Promise<unknown>, outcome = 'done') => async (event?: Event) => {
    event?.preventDefault();
    try {
      await action();
      setMessage(`${what}: ${outcome}`);
      onChanged();
    } catch (failure) {
      notify({ kind: 'error', title: `${what} failed`, text: (failure as Error).message });
    }
  };
  const rename = run('Rename', () =>
    gql(
      folder
        ? 'mutation Rename($repository: String!, $id: ID!, $name: String!) { updateFolder(repository: $repository, id: $id, input: { name: $name }) { id } }'
        : 'mutation Rename($repository: String!, $id: ID!, $name: String!) { updateContent(repository: $repository, id: $id, input: { name: $name }) { id } }',
      { repository, id: entry.id, name },
    ),
  );
  const remove = run('Delete', () =>
    gql(
      folder
        ? 'mutation Delete($repository: String!, $id: ID!) { deleteFolder(repository: $repository, id: $id, recursive: true) }'
        : 'mutation Delete($repository: String!, $id: ID!) { deleteContent(repository: $repository, id: $id) }',
      { repository, id: entry.id },
    ),
  );
  const convert = run('Conversion', async () => {
    const { convertToImage } = await gql<{ convertToImage: { jobId: string } }>(
      'mutation Convert($repository: String!, $input: ImageConversionInput!) { convertToImage(repository: $repository, input: $input) { jobId } }',
      { repository, input: { contentId: entry.id, resultAction: 'CONTENT_REPRESENTATION', targetFormat: format } },
    );
    watch(convertToImage.jobId);
    notify({ kind: 'info', title: 'Conversion started', text: `${entry.name}: job ${convertToImage.jobId} (see Jobs)` });
  }, 'started');
  const [tag, setTag] = useState('');
  // a content's tags change one by one; a folder's are replaced as a whole (updateFolder)
  const changeTags = (add: boolean, changed: string) =>
    run(add ? 'Add tag' : 'Remove tag', async () => {
      if (folder) {
        const tags = add ? [...entry.tags, changed] : entry.tags.filter((each) => each !== changed);
        await gql('mutation FolderTags($repository: String!, $id: ID!, $tags: [String!]) { updateFolder(repository: $repository, id: $id, input: { tags: $tags }) { id } }', { repository, id: entry.id, tags });
      } else {
        await gql(`mutation Tags($repository: String!, $id: ID!, $tags: [String!]!) { ${add ? 'addTags' : 'removeTags'}(repository: $repository, id: $id, tags: $tags) { id } }`, { repository, id: entry.id, tags: [changed] });
      }
      setTag('');
    });
  const folders = useFolderChoices(repository);
  const [target, setTarget] = useState('');
  const targetPath = folders.find((choice) => choice.id === target)?.path ?? '/';
  const move = run(
    'Move',
    () =>
      gql(
        `mutation Move($repository: String!, $id: ID!, $parentId: ID) { ${folder ? 'updateFolder' : 'updateContent'}(repository: $repository, id: $id, input: { parentId: $parentId }) { id } }`,
        { repository, id: entry.id, parentId: target },
      ),
    `to ${targetPath}`,
  );
  const copy = run(
    'Copy',
    () => gql('mutation Copy($repository: String!, $id: ID!, $parentId: ID) { copyContent(repository: $repository, id: $id, input: { parentId: $parentId }) { id } }', { repository, id: entry.id, parentId: target }),
    `to ${targetPath}`,
  );
  return (
    <div class="actions">
      <form onSubmit={changeTags(true, tag)} class="inline">
        <label>
          New tag
          <input value={tag} required onInput={(event) => setTag(event.currentTarget.value)} />
        </label>
        <button type="submit">Add tag</button>
        {entry.tags.map((each) => (
          <button type="button" aria-label={`Remove tag ${each}`} onClick={changeTags(false, each)}>
            {each} ×
          </button>
        ))}
      </form>
      <form onSubmit={move} class="inline">
        <FolderSelect label="Target folder" choices={folders} value={target} onChange={setTarget} root exclude={folder ? entry.id : undefined} />
        <button type="submit">Move</button>
        {!folder && (
          <button type="button" onClick={() => copy()}>
            Copy
          </button>
        )}
      </form>
      <form onSubmit={rename} class="inline">
        <label>
          New name
          <input value={name} required onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <button type="submit">Rename</button>
      </form>
      {!folder && entry.resource && (
        <div class="inline">
          <button type="button" onClick={run('Download', () => download(entry.resource!.downloadUrl, entry.name))}>
            Download
          </button>
        </div>
      )}
      {!folder && (
        <form onSubmit={convert} class="inline">
          <label>
            Image format
            <select value={format} onChange={(event) => setFormat(event.currentTarget.value)}>
              {['png', 'jpeg', 'webp', 'tiff'].map((value) => (
                <option value={value}>{value}</option>
              ))}
            </select>
          </label>
          <button type="submit">Convert to images</button>
        </form>
      )}
      <div class="inline">
        <button type="button" class="danger" onClick={() => confirm(folder ? `Delete ${entry.name} and everything in it for good?` : `Delete ${entry.name}? (Deleted contents can restore it)`) && remove()}>
          Delete
        </button>
      </div>
      {message && (
        <p role="status" class="meta">
          {message}
        </p>
      )}
    </div>
  );
}
