import { useState } from 'preact/hooks';
import { gql } from './api.js';
import { formatSize } from './entries.js';
import { useFail } from './notifications.js';
import { run, TableHead, useList } from './parts.js';

interface Limits {
  conversionLimit: string | null;
  conversionStrategy: string | null;
  maxInputFileSize: number | null;
  maxNumberOfInputFiles: number | null;
  maxTotalInputFileSize: number | null;
}

interface RepositoryRow {
  id: string;
  name: string;
  fullTextEnabled: boolean;
  modifiedAt: string;
  modifiedBy: string;
  limits: Limits;
}

const conversionLimits = ['LOW', 'MEDIUM', 'HIGH', 'UNLIMITED'];
const conversionStrategies = ['LOW_PRIORITY', 'REPLACE', 'ERROR'];
const limitFields = 'conversionLimit conversionStrategy maxInputFileSize maxNumberOfInputFiles maxTotalInputFileSize';

/** A repository's limits in a few words; an unset limit is the service's (CONV_MAX_*). */
function describeLimits(limits: Limits): string {
  const parts = [
    limits.conversionLimit && `PDF objects ${limits.conversionLimit}`,
    limits.conversionStrategy && `over it: ${limits.conversionStrategy}`,
    limits.maxInputFileSize !== null && `file ≤ ${formatSize(limits.maxInputFileSize)}`,
    limits.maxNumberOfInputFiles !== null && `≤ ${limits.maxNumberOfInputFiles} files a job`,
    limits.maxTotalInputFileSize !== null && `job ≤ ${formatSize(limits.maxTotalInputFileSize)}`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'the service’s limits';
}

/** Repositories: each with its full-text flag and limits; a new repository; a repository's limits edited. */
export function Repositories() {
  const fail = useFail();
  const [repositories, load] = useList<RepositoryRow>(`query RepositoryList { list: repositories { id name fullTextEnabled modifiedAt modifiedBy limits { ${limitFields} } } }`, fail('Repositories unavailable'));
  const [name, setName] = useState('');
  const [fullText, setFullText] = useState(true);
  const [editing, setEditing] = useState<string>();
  const create = async (event: Event) => {
    event.preventDefault();
    const done = await run(() => gql('mutation CreateRepository($input: CreateRepositoryInput!) { createRepository(input: $input) { id } }', { input: { name, fullTextEnabled: fullText } }), fail('New repository failed'));
    if (done) {
      setName('');
      void load();
    }
  };
  const edited = repositories.find((repository) => repository.id === editing);
  return (
    <section class="card" aria-labelledby="repositories-title">
      <h3 id="repositories-title">Repositories</h3>
      <div class="scroll">
        <table>
          <TableHead columns={['Name', 'Full text', 'Limits', { name: 'Changed', wide: true }, { name: 'Actions', hidden: true }]} />
          <tbody>
            {repositories.map((repository) => (
              <tr key={repository.id} class={repository.id === editing ? 'selected' : undefined}>
                <td>{repository.name}</td>
                <td>{repository.fullTextEnabled ? 'on' : 'off'}</td>
                <td>{describeLimits(repository.limits)}</td>
                <td class="wide">
                  {new Date(repository.modifiedAt).toLocaleString()} by {repository.modifiedBy}
                </td>
                <td>
                  <button type="button" aria-expanded={repository.id === editing} aria-label={`Edit limits of ${repository.name}`} onClick={() => setEditing(repository.id === editing ? undefined : repository.id)}>
                    Edit limits
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {edited && (
        <LimitsForm
          key={edited.id}
          repository={edited}
          onSaved={() => {
            setEditing(undefined);
            void load();
          }}
        />
      )}
      <form class="inline" onSubmit={create}>
        <label>
          Repository name
          <input value={name} required pattern="[A-Za-z0-9_\-]{1,64}" onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={fullText} onChange={(event) => setFullText(event.currentTarget.checked)} />
          Full-text search
        </label>
        <button type="submit">Create repository</button>
      </form>
    </section>
  );
}

/** A number field's value for the API: empty unsets the limit (null). */
const limitValue = (text: string) => (text.trim() === '' ? null : Number(text));
const fieldText = (value: number | null) => (value === null ? '' : String(value));

/** A repository's limits and full-text flag: every field is sent, an empty one unsets its limit. */
function LimitsForm({ repository, onSaved }: { repository: RepositoryRow; onSaved: () => void }) {
  const fail = useFail();
  const { limits } = repository;
  const [form, setForm] = useState({
    conversionLimit: limits.conversionLimit ?? '',
    conversionStrategy: limits.conversionStrategy ?? '',
    maxInputFileSize: fieldText(limits.maxInputFileSize),
    maxNumberOfInputFiles: fieldText(limits.maxNumberOfInputFiles),
    maxTotalInputFileSize: fieldText(limits.maxTotalInputFileSize),
    fullTextEnabled: repository.fullTextEnabled,
  });
  const change = (field: keyof typeof form) => (event: Event) => {
    const target = event.currentTarget as HTMLInputElement;
    setForm({ ...form, [field]: target.type === 'checkbox' ? target.checked : target.value });
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const input = {
      conversionLimit: form.conversionLimit || null,
      conversionStrategy: form.conversionStrategy || null,
      maxInputFileSize: limitValue(form.maxInputFileSize),
      maxNumberOfInputFiles: limitValue(form.maxNumberOfInputFiles),
      maxTotalInputFileSize: limitValue(form.maxTotalInputFileSize),
      fullTextEnabled: form.fullTextEnabled,
    };
    const done = await run(
      () => gql('mutation UpdateLimits($repositoryId: ID!, $input: UpdateRepositoryLimitsInput!) { updateRepositoryLimits(repositoryId: $repositoryId, input: $input) { id } }', { repositoryId: repository.id, input }),
      fail('Changing the limits failed'),
    );
    if (done) onSaved();
  };
  const choice = (label: string, field: 'conversionLimit' | 'conversionStrategy', values: string[]) => (
    <label>
      {label}
      <select value={form[field]} onChange={change(field)}>
        <option value="">not set</option>
        {values.map((value) => (
          <option value={value}>{value}</option>
        ))}
      </select>
    </label>
  );
  const number = (label: string, field: 'maxInputFileSize' | 'maxNumberOfInputFiles' | 'maxTotalInputFileSize') => (
    <label>
      {label}
      <input type="number" min={1} step={1} value={form[field]} placeholder="not set" onInput={change(field)} />
    </label>
  );
  return (
    <form class="inline limits" onSubmit={save} aria-label={`Limits of ${repository.name}`}>
      {choice('Share of the PDF object limits', 'conversionLimit', conversionLimits)}
      {choice('Over that share', 'conversionStrategy', conversionStrategies)}
      {number('Largest input file (bytes)', 'maxInputFileSize')}
      {number('Input files a job', 'maxNumberOfInputFiles')}
      {number('All input files of a job (bytes)', 'maxTotalInputFileSize')}
      <label class="check">
        <input type="checkbox" checked={form.fullTextEnabled} onChange={change('fullTextEnabled')} />
        Full-text search
      </label>
      <button type="submit">Save limits</button>
    </form>
  );
}
