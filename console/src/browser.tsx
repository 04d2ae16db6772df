import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { gql, subscribe, upload } from './api.js';
import { entryFields, EntryTable, formatSize, type EntryRow } from './entries.js';
import { useNotify } from './notifications.js';
import { NameForm } from './parts.js';
import { DeletedContents } from './trash.js';

interface Crumb {
  id?: string;
  name: string;
}

const pageSize = 25;
const orderings = { name: 'Name', lastModifiedAt: 'Last modified', createdAt: 'Created' } as const;

/** Repositories, the folder path as breadcrumbs, a folder's children page by page, new folders and uploads. */
export function Browser({ repository, onRepository, admin }: { repository: string; onRepository: (name: string) => void; admin: boolean }) {
  const [repositories, setRepositories] = useState<string[]>([repository]);
  const [path, setPath] = useState<Crumb[]>([{ name: repository }]);
  const [page, setPage] = useState({ count: 0, entries: [] as EntryRow[] });
  const [offset, setOffset] = useState(0);
  const [orderBy, setOrderBy] = useState<keyof typeof orderings>('name');
  const [direction, setDirection] = useState<'asc' | 'desc'>('asc');
  const [error, setError] = useState<string>();
  // counts the loads of the page shown: what else shows the repository's state (deleted contents) follows it
  const [loads, setLoads] = useState(0);
  const folderId = path[path.length - 1]!.id;

  useEffect(() => {
    if (!admin) return;
    gql<{ repositories: { name: string }[] }>('query Repositories { repositories { name } }')
      .then(({ repositories }) => setRepositories(repositories.map((each) => each.name)))
      .catch((failure: Error) => setError(failure.message));
  }, [admin]);

  const load = useCallback(async () => {
    const options = { limit: pageSize, offset, orderBy, orderingDirection: direction };
    try {
      const answer = folderId
        ? (await gql<{ folderChildren: typeof page }>(`query Children($repository: String!, $id: ID!, $options: SearchOptions) { folderChildren(repository: $repository, id: $id, options: $options) { count entries { ${entryFields} } } }`, { repository, id: folderId, options })).folderChildren
        : (await gql<{ home: typeof page }>(`query Home($repository: String!, $options: SearchOptions) { home(repository: $repository, options: $options) { count entries { ${entryFields} } } }`, { repository, options })).home;
      setPage(answer);
      setLoads((count) => count + 1);
      setError(undefined);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }, [repository, folderId, offset, orderBy, direction]);
  useEffect(() => void load(), [load]);

  // others' changes show as they commit: the folder's events (at the root, the repository's) reload
  // the page shown, at most every half second
  const latestLoad = useRef(load);
  latestLoad.current = load;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = subscribe(
      'subscription FolderEvents($repository: String!, $folderId: ID) { contentEvents(repository: $repository, folderId: $folderId) { id } }',
      { repository, folderId },
      () => {
        timer ??= setTimeout(() => {
          timer = undefined;
          void latestLoad.current();
        }, 500);
      },
      () => {},
    );
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, [repository, folderId]);

  const goTo = (crumbs: Crumb[]) => {
    setPath(crumbs);
    setOffset(0);
  };
  const chooseRepository = (name: string) => {
    onRepository(name);
    goTo([{ name }]);
  };

  return (
    <section aria-labelledby="browser-title">
      <h2 id="browser-title" class="visually-hidden">
        Repository
      </h2>
      <div class="row">
        <label>
          Repository
          <select value={repository} onChange={(event) => chooseRepository(event.currentTarget.value)}>
            {repositories.map((name) => (
              <option value={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Order by
          <select value={orderBy} onChange={(event) => setOrderBy(event.currentTarget.value as keyof typeof orderings)}>
            {(Object.keys(orderings) as (keyof typeof orderings)[]).map((key) => (
              <option value={key}>{orderings[key]}</option>
            ))}
          </select>
        </label>
        <label>
          Direction
          <select value={direction} onChange={(event) => setDirection(event.currentTarget.value as 'asc' | 'desc')}>
            <option value="asc">ascending</option>
            <option value="desc">descending</option>
          </select>
        </label>
      </div>
      <nav aria-label="Folder path" class="crumbs">
        <ol>
          {path.map((crumb, index) => (
            <li>
              {index === path.length - 1 ? (
                <span aria-current="location">{crumb.name}</span>
              ) : (
                <button type="button" class="link" onClick={() => goTo(path.slice(0, index + 1))}>
                  {crumb.name}
                </button>
              )}
            </li>
          ))}
        </ol>
      </nav>
      <div class="row tools">
        <NewFolder repository={repository} parentId={folderId} onCreated={load} />
        <Uploader repository={repository} parentId={folderId} onUploaded={load} />
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <EntryTable repository={repository} entries={page.entries} caption={`Contents of ${path[path.length - 1]!.name}`} onOpenFolder={(entry) => goTo([...path, { id: entry.id, name: entry.name }])} onChanged={load} />
      <div class="row paging">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - pageSize))}>
          Previous page
        </button>
        <span role="status">
          {page.count === 0 ? 'empty' : `${offset + 1}–${Math.min(offset + pageSize, page.count)} of ${page.count}`}
        </span>
        <button type="button" disabled={offset + pageSize >= page.count} onClick={() => setOffset(offset + pageSize)}>
          Next page
        </button>
      </div>
      <DeletedContents repository={repository} version={loads} onRestored={load} />
    </section>
  );
}

function NewFolder({ repository, parentId, onCreated }: { repository: string; parentId?: string; onCreated: () => void }) {
  const notify = useNotify();
  const create = async (name: string) => {
    try {
      await gql('mutation CreateFolder($repository: String!, $input: CreateFolderInput!) { createFolder(repository: $repository, input: $input) { id } }', { repository, input: { name, parentId } });
      onCreated();
      return true;
    } catch (failure) {
      notify({ kind: 'error', title: 'New folder failed', text: (failure as Error).message });
      return false;
    }
  };
  return <NameForm label="New folder" action="Create folder" onName={create} />;
}

interface Transfer {
  name: string;
  size: number;
  fraction: number;
  error?: string;
}

/** Files chosen or dropped, each sent with its own progress bar, then made contents of the folder. */
function Uploader({ repository, parentId, onUploaded }: { repository: string; parentId?: string; onUploaded: () => void }) {
  const [transfers, setTransfers] = useState<Transfer[]>([]);
  const [over, setOver] = useState(false);
  const send = async (files: File[]) => {
    const start = transfers.length;
    setTransfers((list) => [...list, ...files.map((file) => ({ name: file.name, size: file.size, fraction: 0 }))]);
    const update = (index: number, change: Partial<Transfer>) => setTransfers((list) => list.map((transfer, at) => (at === start + index ? { ...transfer, ...change } : transfer)));
    await Promise.all(
      files.map(async (file, index) => {
        try {
          const uploadId = await upload(repository, file, (fraction) => update(index, { fraction }));
          await gql('mutation CreateContent($repository: String!, $input: CreateContentInput!) { createContent(repository: $repository, input: $input) { id } }', {
            repository,
            input: { uploadId, name: file.name, parentId },
          });
          update(index, { fraction: 1 });
        } catch (failure) {
          update(index, { error: (failure as Error).message });
        }
      }),
    );
    onUploaded();
  };
  return (
    <div
      class={`drop ${over ? 'over' : ''}`}
      onDragOver={(event) => {
        event.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(event) => {
        event.preventDefault();
        setOver(false);
        void send([...(event.dataTransfer?.files ?? [])]);
      }}
    >
      <label>
        Upload files (or drop them here)
        <input
          type="file"
          multiple
          onChange={(event) => {
            const files = [...(event.currentTarget.files ?? [])];
            event.currentTarget.value = '';
            void send(files);
          }}
        />
      </label>
      {transfers.length > 0 && (
        <ul class="transfers" aria-label="Uploads">
          {transfers.map((transfer) => (
            <li>
              <span>
                {transfer.name} ({formatSize(transfer.size)})
              </span>
              <progress max={1} value={transfer.fraction} aria-label={`Upload of ${transfer.name}`} />
              <span>{transfer.error ? <span class="error">{transfer.error}</span> : transfer.fraction >= 1 ? 'done' : `${Math.round(transfer.fraction * 100)} %`}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
