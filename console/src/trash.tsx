import { useCallback, useEffect, useState } from 'preact/hooks';
import { gql } from './api.js';
import { useNotify } from './notifications.js';
import { TableHead } from './parts.js';

interface DeletedContent {
  id: string;
  name: string;
  lastModifiedAt: string;
  lastModifiedBy: string;
  parent: { name: string } | null;
}

/** the most deleted contents listed at once, most recently changed first */
const shownAtMost = 100;

/**
 * The repository's deleted (deactivated) contents — a search naming `active` finds them, `active =
 * false` only them — each with Restore. Folders are deleted for good, so only contents are here.
 * `version` loads the list again when it changes (the folder shown changed).
 */
export function DeletedContents({ repository, version, onRestored }: { repository: string; version: number; onRestored: () => void }) {
  const notify = useNotify();
  const [open, setOpen] = useState(false);
  const [page, setPage] = useState<{ count: number; entries: DeletedContent[] }>();
  const load = useCallback(async () => {
    try {
      const { searchByCondition } = await gql<{ searchByCondition: { count: number; entries: DeletedContent[] } }>(
        'query Deleted($repository: String!, $options: SearchOptions) { searchByCondition(repository: $repository, condition: "active = false", options: $options) { count entries { id name lastModifiedAt lastModifiedBy parent { name } } } }',
        { repository, options: { entryType: 'CONTENT', limit: shownAtMost, orderBy: 'lastModifiedAt', orderingDirection: 'desc' } },
      );
      setPage(searchByCondition);
    } catch (failure) {
      notify({ kind: 'error', title: 'Deleted contents unavailable', text: (failure as Error).message });
    }
  }, [repository]);
  useEffect(() => {
    if (open) void load();
  }, [open, load, version]);
  const restore = async (content: DeletedContent) => {
    try {
      await gql('mutation Restore($repository: String!, $id: ID!) { restoreContent(repository: $repository, id: $id) { id } }', { repository, id: content.id });
      notify({ kind: 'info', title: 'Restored', text: `${content.name} is back in ${content.parent?.name ?? 'the root'}` });
      await load();
      onRestored();
    } catch (failure) {
      notify({ kind: 'error', title: 'Restore failed', text: (failure as Error).message });
    }
  };
  return (
    <section class="card" aria-labelledby="deleted-title">
      <div class="row">
        <h3 id="deleted-title">Deleted contents</h3>
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide deleted contents' : 'Show deleted contents'}
        </button>
      </div>
      {open && page && (
        <div class="scroll">
          <table class="deleted">
            <caption class="visually-hidden">Deleted contents of {repository}</caption>
            <TableHead columns={['Name', 'Folder', { name: 'Last changed', wide: true }, { name: 'Actions', hidden: true }]} />
            <tbody>
              {page.entries.length === 0 && (
                <tr>
                  <td colSpan={4}>Nothing deleted.</td>
                </tr>
              )}
              {page.entries.map((content) => (
                <tr key={content.id}>
                  <td>{content.name}</td>
                  <td>{content.parent?.name ?? '/'}</td>
                  <td class="wide">
                    {new Date(content.lastModifiedAt).toLocaleString()} by {content.lastModifiedBy}
                  </td>
                  <td>
                    <button type="button" aria-label={`Restore ${content.name}`} onClick={() => restore(content)}>
                      Restore
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {page.count > page.entries.length && <p class="meta">The {shownAtMost} most recent of {page.count}.</p>}
        </div>
      )}
    </section>
  );
}
