import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { gql, subscribe } from './api.js';
import { TableHead } from './parts.js';
import { useNotify } from './notifications.js';

export interface Job {
  id: string;
  state: string;
  percentage: number;
  tries: number;
  conversionType: string;
  displayFilename?: string | null;
  inputFilenames: string[];
  reasonCode?: string | null;
  errorMessage?: string | null;
  createdAt: string;
}

const jobFields = 'id state percentage tries conversionType displayFilename inputFilenames reasonCode errorMessage createdAt';
const finalStates = new Set(['Done', 'panic', 'cancelled']);

const JobsContext = createContext<{ live: Map<string, Job>; watch: (jobId: string) => void }>({ live: new Map(), watch: () => {} });

/**
 * Jobs of this session followed live: each watched job's `jobStatus` subscription updates it until it
 * ends; one that fails raises a 'Conversion Failed' notification with its reason code and message.
 */
export function JobsProvider({ repository, children }: { repository: string; children: ComponentChildren }) {
  const notify = useNotify();
  const [live, setLive] = useState(new Map<string, Job>());
  const watched = useRef(new Map<string, () => void>());
  useEffect(() => () => watched.current.forEach((stop) => stop()), []);
  const watch = useCallback(
    (jobId: string) => {
      if (watched.current.has(jobId)) return;
      const stop = subscribe<{ jobStatus: { serviceRequestJob: Job } }>(
        `subscription JobStatus($repository: String!, $jobId: ID!) { jobStatus(repository: $repository, jobId: $jobId) { serviceRequestJob { ${jobFields} } } }`,
        { repository, jobId },
        ({ jobStatus: { serviceRequestJob: job } }) => {
          setLive((map) => new Map(map).set(job.id, job));
          if (job.state === 'panic') {
            notify({ kind: 'error', title: 'Conversion Failed', text: `${job.displayFilename ?? job.inputFilenames.join(', ')}: ${job.reasonCode ?? 'internal'} — ${job.errorMessage ?? 'no message'}` });
          }
        },
        (error) => {
          if (error) notify({ kind: 'error', title: 'Job status unavailable', text: error.message });
        },
      );
      watched.current.set(jobId, stop);
    },
    [repository, notify],
  );
  return <JobsContext.Provider value={{ live, watch }}>{children}</JobsContext.Provider>;
}

export const useJobs = () => useContext(JobsContext);

/** The cache area's Jobs list: the newest first, the unfinished ones followed live. */
export function JobsView({ repository }: { repository: string }) {
  const { live, watch } = useJobs();
  const [listed, setListed] = useState<Job[]>([]);
  const [error, setError] = useState<string>();
  const load = useCallback(async () => {
    try {
      const { jobs } = await gql<{ jobs: { entries: Job[] } }>(`query Jobs($repository: String!) { jobs(repository: $repository, limit: 50) { entries { ${jobFields} } } }`, { repository });
      setListed(jobs.entries);
      jobs.entries.filter((job) => !finalStates.has(job.state)).forEach((job) => watch(job.id));
      setError(undefined);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }, [repository, watch]);
  useEffect(() => void load(), [load]);
  const ids = new Set(listed.map((job) => job.id));
  const jobs = [...[...live.values()].filter((job) => !ids.has(job.id)), ...listed].map((job) => live.get(job.id) ?? job);
  return (
    <section aria-labelledby="jobs-title">
      <div class="row">
        <h2 id="jobs-title">Jobs</h2>
        <button type="button" onClick={load}>
          Refresh
        </button>
      </div>
      {error && <p class="error">{error}</p>}
      {jobs.length === 0 ? (
        <p>No jobs yet.</p>
      ) : (
        <div class="scroll">
          <table class="jobs">
            <TableHead columns={['File', 'Type', 'State', 'Progress', 'Tries', 'Reason']} />
            <tbody>
              {jobs.map((job) => (
                <tr key={job.id} data-job={job.id}>
                  <td>{job.displayFilename ?? job.inputFilenames.join(', ')}</td>
                  <td>{job.conversionType}</td>
                  <td class={`state ${job.state}`}>{job.state}</td>
                  <td class="progress">
                    <progress max={100} value={job.percentage} aria-label={`Progress of job ${job.id}`}>
                      {job.percentage} %
                    </progress>{' '}
                    {Math.round(job.percentage)} %
                  </td>
                  <td>{job.tries}</td>
                  <td>{job.reasonCode ? `${job.reasonCode}: ${job.errorMessage ?? ''}` : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
