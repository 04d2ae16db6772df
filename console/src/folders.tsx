import { useEffect, useState } from 'preact/hooks';
import { gql } from './api.js';

export interface FolderChoice {
  id: string;
  /** the folder's path from the root, e.g. /Reports/2026 */
  path: string;
}

/** the most folders a picker lists (the search's page limit) */
const maxFolders = 1000;

/**
 * Every folder of the repository with its path (one search: each folder names its parent), by path;
 * `version` loads them again when it changes.
 */
export function useFolderChoices(repository: string, version = 0): FolderChoice[] {
  const [choices, setChoices] = useState<FolderChoice[]>([]);
  useEffect(() => {
    gql<{ searchByProperties: { entries: { id: string; name: string; parent: { id: string } | null }[] } }>(
      'query Folders($repository: String!, $options: SearchOptions) { searchByProperties(repository: $repository, options: $options) { entries { id name parent { id } } } }',
      { repository, options: { entryType: 'FOLDER', limit: maxFolders } },
    )
      .then(({ searchByProperties: { entries } }) => {
        const byId = new Map(entries.map((folder) => [folder.id, folder]));
        const pathOf = (id: string, depth = 0): string => {
          const folder = byId.get(id);
          // a parent beyond the page (more folders than listed): its path starts at the part known
          if (!folder || depth > 1000) return '…';
          return `${folder.parent ? pathOf(folder.parent.id, depth + 1) : ''}/${folder.name}`;
        };
        setChoices(entries.map((folder) => ({ id: folder.id, path: pathOf(folder.id) })).sort((a, b) => a.path.localeCompare(b.path)));
      })
      .catch(() => setChoices([]));
  }, [repository, version]);
  return choices;
}

/**
 * A labelled choice of a folder by its path; with `root`, the repository's root level first (value "");
 * `exclude` leaves out a folder and what lies below it (where a folder cannot move).
 */
export function FolderSelect({ label, choices, value, onChange, root, exclude }: { label: string; choices: FolderChoice[]; value: string; onChange: (id: string) => void; root?: boolean; exclude?: string }) {
  const excluded = exclude && choices.find((choice) => choice.id === exclude)?.path;
  return (
    <label>
      {label}
      <select value={value} required={!root} onChange={(event) => onChange(event.currentTarget.value)}>
        {root ? <option value="">/ (root)</option> : <option value="">choose…</option>}
        {choices
          .filter((choice) => !excluded || (choice.path !== excluded && !choice.path.startsWith(`${excluded}/`)))
          .map((choice) => (
            <option value={choice.id}>{choice.path}</option>
          ))}
      </select>
    </label>
  );
}
