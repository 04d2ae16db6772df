import { useState } from 'preact/hooks';
import { ApiError, gql } from './api.js';
import { entryFields, EntryTable, type EntryRow } from './entries.js';

const modes = { properties: 'Properties', condition: 'Condition', text: 'Full text' } as const;
type Mode = keyof typeof modes;

interface Results {
  count: number;
  entries: EntryRow[];
  words: string[];
}

/** Where a refused condition went wrong: the service's message names the position (DESIGN §6). */
const positionOf = (message: string): number | undefined => {
  const match = /at position (\d+)/.exec(message);
  return match ? Number(match[1]) : undefined;
};

export function SearchView({ repository }: { repository: string }) {
  const [mode, setMode] = useState<Mode>('properties');
  const [name, setName] = useState('');
  const [mimeType, setMimeType] = useState('');
  const [tags, setTags] = useState('');
  const [owner, setOwner] = useState('');
  const [condition, setCondition] = useState('');
  const [text, setText] = useState('');
  const [results, setResults] = useState<Results>();
  const [error, setError] = useState<{ message: string; position?: number }>();

  const search = async (event?: Event) => {
    event?.preventDefault();
    setError(undefined);
    const options = { limit: 100 };
    try {
      if (mode === 'properties') {
        const filter = Object.fromEntries(
          Object.entries({ name: name || undefined, mimeType: mimeType || undefined, owner: owner || undefined, tags: tags ? tags.split(',').map((tag) => tag.trim()) : undefined }).filter(([, value]) => value !== undefined),
        );
        const { searchByProperties } = await gql<{ searchByProperties: Results }>(
          `query ByProperties($repository: String!, $filter: PropertyFilter, $options: SearchOptions) { searchByProperties(repository: $repository, filter: $filter, options: $options) { count entries { ${entryFields} } } }`,
          { repository, filter, options },
        );
        setResults({ ...searchByProperties, words: name ? [name] : [] });
      } else if (mode === 'condition') {
        const { searchByCondition } = await gql<{ searchByCondition: Results }>(
          `query ByCondition($repository: String!, $condition: String!, $options: SearchOptions) { searchByCondition(repository: $repository, condition: $condition, options: $options) { count entries { ${entryFields} } } }`,
          { repository, condition, options },
        );
        setResults({ ...searchByCondition, words: [] });
      } else {
        const { searchByText } = await gql<{ searchByText: Results }>(
          `query ByText($repository: String!, $searchText: String!, $options: SearchOptions) { searchByText(repository: $repository, searchText: $searchText, options: $options) { count entries { ${entryFields} } } }`,
          { repository, searchText: text, options },
        );
        setResults({ ...searchByText, words: text.split(/\s+/) });
      }
    } catch (failure) {
      const message = (failure as ApiError).message;
      setResults(undefined);
      setError({ message, position: mode === 'condition' ? positionOf(message) : undefined });
    }
  };

  return (
    <section aria-labelledby="search-title">
      <h2 id="search-title">Search</h2>
      <form onSubmit={search} class="search">
        <fieldset class="inline">
          <legend>Search by</legend>
          {(Object.keys(modes) as Mode[]).map((key) => (
            <label class="check">
              <input type="radio" name="mode" value={key} checked={mode === key} onChange={() => setMode(key)} />
              {modes[key]}
            </label>
          ))}
        </fieldset>
        {mode === 'properties' && (
          <div class="inline">
            <label>
              Name (exact)
              <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
            </label>
            <label>
              Media type
              <input value={mimeType} placeholder="application/pdf" onInput={(event) => setMimeType(event.currentTarget.value)} />
            </label>
            <label>
              Tags (comma separated)
              <input value={tags} onInput={(event) => setTags(event.currentTarget.value)} />
            </label>
            <label>
              Owner
              <input value={owner} onInput={(event) => setOwner(event.currentTarget.value)} />
            </label>
          </div>
        )}
        {mode === 'condition' && (
          <div>
            <label>
              Condition expression
              <input
                class="wide-input"
                value={condition}
                required
                placeholder="name like '*.pdf' and resource.fileSize > 1000"
                aria-invalid={error !== undefined}
                aria-describedby={error ? 'condition-error' : undefined}
                onInput={(event) => setCondition(event.currentTarget.value)}
              />
            </label>
            {error?.position !== undefined && (
              <pre class="caret" aria-hidden="true">
                {condition}
                {'\n'}
                {' '.repeat(Math.max(0, error.position - 1))}^
              </pre>
            )}
          </div>
        )}
        {mode === 'text' && (
          <label>
            Words
            <input class="wide-input" value={text} required onInput={(event) => setText(event.currentTarget.value)} />
          </label>
        )}
        {error && (
          <p id="condition-error" class="error" role="alert">
            {error.message}
          </p>
        )}
        <button type="submit">Search</button>
      </form>
      {results && (
        <>
          <p role="status">{results.count} found</p>
          <EntryTable repository={repository} entries={results.entries} caption="Search results" highlight={results.words} onChanged={() => void search()} />
        </>
      )}
    </section>
  );
}
