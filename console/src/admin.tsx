import { useState } from 'preact/hooks';
import { gql } from './api.js';
import { formatSize } from './entries.js';
import { useFail } from './notifications.js';
import { NameForm, run, useList } from './parts.js';
import { Policies } from './policies.js';
import { Repositories } from './repositories.js';

/** Administration: the service's checks, repositories and their limits, policies, a repository's statistics, users and groups. */
export function Administration({ repository }: { repository: string }) {
  return (
    <>
      <h2>Administration</h2>
      <Repositories />
      <Policies repository={repository} />
      <ConnectionCheck repository={repository} />
      <DeepCheck repository={repository} />
      <Statistics repository={repository} />
      <Users />
      <Groups />
    </>
  );
}

interface Check {
  checkStatus: string;
  message: string;
  entries: { name: string; checkStatus: string; message: string }[];
}

function ConnectionCheck({ repository }: { repository: string }) {
  const [check, setCheck] = useState<Check>();
  const [error, setError] = useState<string>();
  const start = async () => {
    const answer = await run(() => gql<{ connectionCheck: Check }>('query ConnectionCheck($repositoryName: String) { connectionCheck(repositoryName: $repositoryName) { checkStatus message entries { name checkStatus message } } }', { repositoryName: repository }), setError);
    if (answer) setCheck(answer.connectionCheck);
  };
  return (
    <section class="card" aria-labelledby="connection-title">
      <h3 id="connection-title">Connection check</h3>
      <button type="button" onClick={start}>
        Check connections
      </button>
      {error && <p class="error">{error}</p>}
      {check && (
        <>
          <p role="status">
            <span class={`state ${check.checkStatus}`}>{check.checkStatus}</span> {check.message}
          </p>
          <ul class="checks">
            {check.entries.map((entry) => (
              <li>
                <span class={`state ${entry.checkStatus}`}>{entry.checkStatus}</span> <strong>{entry.name}</strong>: {entry.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

interface DeepReport {
  checkStatus: string;
  message: string;
  testTime: string;
  test: { listFeatures: { featureName: string; featureDescription: string; status: string; duration: number; listScenarios: { scenarioName: string; status: string; errorMessage?: string | null }[] }[] };
}

/** Runs the deep check (the spec's scenarios, as a client) and shows its report, feature by feature. */
function DeepCheck({ repository }: { repository: string }) {
  const [report, setReport] = useState<DeepReport>();
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string>();
  const start = async () => {
    setRunning(true);
    setError(undefined);
    const answer = await run(
      () =>
        gql<{ deepCheck: DeepReport }>(
          'mutation DeepCheck($repositoryName: String) { deepCheck(repositoryName: $repositoryName) { checkStatus message testTime test { listFeatures { featureName featureDescription status duration listScenarios { scenarioName status errorMessage } } } } }',
          { repositoryName: repository },
        ),
      setError,
    );
    if (answer) setReport(answer.deepCheck);
    setRunning(false);
  };
  return (
    <section class="card" aria-labelledby="deep-title" aria-busy={running}>
      <h3 id="deep-title">Deep check</h3>
      <button type="button" onClick={start} disabled={running}>
        {running ? 'Running the deep check…' : 'Run the deep check'}
      </button>
      {error && <p class="error">{error}</p>}
      {report && (
        <div class="report" aria-label="Deep check report" role="region">
          <p role="status">
            <span class={`state ${report.checkStatus}`}>{report.checkStatus}</span> {report.message} ({report.testTime})
          </p>
          <ol>
            {report.test.listFeatures.map((feature) => (
              <li>
                <span class={`state ${feature.status}`}>{feature.status}</span> <strong>{feature.featureName}</strong> — {feature.featureDescription} ({feature.duration} ms)
                {feature.listScenarios.some((scenario) => scenario.errorMessage) && (
                  <ul>
                    {feature.listScenarios
                      .filter((scenario) => scenario.errorMessage)
                      .map((scenario) => (
                        <li class="error">
                          {scenario.scenarioName}: {scenario.errorMessage}
                        </li>
                      ))}
                  </ul>
                )}
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}

/** A horizontal bar chart in plain SVG: one labelled bar per value. */
export function BarChart({ title, bars }: { title: string; bars: { label: string; value: number }[] }) {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const rowHeight = 26;
  const labelWidth = 110;
  const width = 320;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${bars.length * rowHeight}`} role="img" aria-label={`${title}: ${bars.map((bar) => `${bar.label} ${bar.value}`).join(', ')}`}>
        {bars.map((bar, index) => {
          const length = ((width - labelWidth - 40) * bar.value) / max;
          const y = index * rowHeight;
          return (
            <g>
              <text x={labelWidth - 6} y={y + 17} text-anchor="end" class="chart-label">
                {bar.label}
              </text>
              <rect x={labelWidth} y={y + 4} width={Math.max(length, 1)} height={rowHeight - 8} class="chart-bar" />
              <text x={labelWidth + length + 4} y={y + 17} class="chart-label">
                {bar.value}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>{title}</figcaption>
    </figure>
  );
}

interface RepositoryStatistics {
  contentStatistics: {
    numberOfContents: number;
    numberOfFolders: number;
    size: number;
    sizeDistribution: Record<'size_0_1MB' | 'size_1MB_10MB' | 'size_10MB_100MB' | 'size_100MB_1GB' | 'size_1GB_10GB' | 'residuals', number>;
  };
  cacheStatistics: { numberOfRepresentations: number; representationsStatus: Record<string, number> };
  notifications: { command: string; executeManually: boolean }[];
}

const sizeBuckets = { size_0_1MB: '< 1 MB', size_1MB_10MB: '1–10 MB', size_10MB_100MB: '10–100 MB', size_100MB_1GB: '100 MB–1 GB', size_1GB_10GB: '1–10 GB', residuals: 'larger' } as const;

function Statistics({ repository }: { repository: string }) {
  const [statistics, setStatistics] = useState<RepositoryStatistics>();
  const [error, setError] = useState<string>();
  const load = async () => {
    const answer = await run(async () => {
      const { repository: found } = await gql<{ repository: { id: string } }>('query RepositoryId($name: String!) { repository(name: $name) { id } }', { name: repository });
      return gql<{ repositoryStatistics: RepositoryStatistics }>(
        `query Statistics($id: ID!) { repositoryStatistics(repositoryId: $id) {
          contentStatistics { numberOfContents numberOfFolders size sizeDistribution { size_0_1MB size_1MB_10MB size_10MB_100MB size_100MB_1GB size_1GB_10GB residuals } }
          cacheStatistics { numberOfRepresentations representationsStatus }
          notifications { command executeManually } } }`,
        { id: found.id },
      );
    }, setError);
    if (answer) setStatistics(answer.repositoryStatistics);
  };
  return (
    <section class="card" aria-labelledby="statistics-title">
      <h3 id="statistics-title">Statistics</h3>
      <button type="button" onClick={load}>
        {statistics ? 'Refresh statistics' : 'Show statistics'}
      </button>
      {error && <p class="error">{error}</p>}
      {statistics && (
        <>
          <p>
            {statistics.contentStatistics.numberOfContents} contents, {statistics.contentStatistics.numberOfFolders} folders, {formatSize(statistics.contentStatistics.size)};{' '}
            {statistics.cacheStatistics.numberOfRepresentations} representations
          </p>
          <div class="charts">
            <BarChart title="Contents by size" bars={(Object.keys(sizeBuckets) as (keyof typeof sizeBuckets)[]).map((key) => ({ label: sizeBuckets[key], value: statistics.contentStatistics.sizeDistribution[key] }))} />
            <BarChart title="Representations by status" bars={Object.entries(statistics.cacheStatistics.representationsStatus).map(([label, value]) => ({ label, value: Number(value) }))} />
          </div>
          {statistics.notifications.length > 0 && (
            <ul aria-label="Statistics notifications">
              {statistics.notifications.map((notification) => (
                <li>
                  {notification.command}
                  {notification.executeManually ? ' (to do by hand)' : ''}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

function Users() {
  const fail = useFail();
  const [userName, setUserName] = useState('');
  const [password, setPassword] = useState('');
  const [administrator, setAdministrator] = useState(false);
  const [users, load] = useList<{ userName: string; roles: string[] }>('query Users { list: users { userName roles } }', fail('Users unavailable'));
  const create = async (event: Event) => {
    event.preventDefault();
    const done = await run(
      () => gql('mutation CreateUser($userName: String!, $password: String!, $roles: [String!]) { createUser(userName: $userName, password: $password, roles: $roles) { userName } }', { userName, password, roles: administrator ? ['ADMIN'] : ['USER'] }),
      fail('New user failed'),
    );
    if (done) {
      setUserName('');
      setPassword('');
      void load();
    }
  };
  const remove = async (name: string) => {
    if (await run(() => gql('mutation DeleteUser($userName: String!) { deleteUser(userName: $userName) }', { userName: name }), fail('Deleting the user failed'))) void load();
  };
  return (
    <section class="card" aria-labelledby="users-title">
      <h3 id="users-title">Users</h3>
      <ul class="people">
        {users.map((user) => (
          <li>
            {user.userName} <span class="meta">{user.roles.join(', ')}</span>{' '}
            <button type="button" aria-label={`Delete user ${user.userName}`} onClick={() => remove(user.userName)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      <form class="inline" onSubmit={create}>
        <label>
          User name
          <input value={userName} required autocomplete="off" onInput={(event) => setUserName(event.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" value={password} required minLength={8} autocomplete="new-password" onInput={(event) => setPassword(event.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={administrator} onChange={(event) => setAdministrator(event.currentTarget.checked)} />
          Administrator
        </label>
        <button type="submit">Create user</button>
      </form>
    </section>
  );
}

function Groups() {
  const fail = useFail();
  const [member, setMember] = useState({ group: '', userName: '' });
  const [groups, load] = useList<{ name: string; members: string[] }>('query Groups { list: groups { name members } }', fail('Groups unavailable'));
  const create = async (name: string) => {
    const done = await run(() => gql('mutation CreateGroup($name: String!) { createGroup(name: $name) { name } }', { name }), fail('New group failed'));
    if (done) void load();
    return done !== undefined;
  };
  const add = async (event: Event) => {
    event.preventDefault();
    if (await run(() => gql('mutation AddMember($name: String!, $userName: String!) { addGroupMember(name: $name, userName: $userName) { name } }', { name: member.group, userName: member.userName }), fail('Adding the member failed'))) {
      setMember({ ...member, userName: '' });
      void load();
    }
  };
  return (
    <section class="card" aria-labelledby="groups-title">
      <h3 id="groups-title">Groups</h3>
      <ul class="people">
        {groups.map((group) => (
          <li>
            <strong>{group.name}</strong>: {group.members.join(', ') || 'no members'}
          </li>
        ))}
      </ul>
      <NameForm label="Group name" action="Create group" onName={create} />
      <form class="inline" onSubmit={add}>
        <label>
          Group
          <select value={member.group} required onChange={(event) => setMember({ ...member, group: event.currentTarget.value })}>
            <option value="">choose…</option>
            {groups.map((group) => (
              <option value={group.name}>{group.name}</option>
            ))}
          </select>
        </label>
        <label>
          Member
          <input value={member.userName} required onInput={(event) => setMember({ ...member, userName: event.currentTarget.value })} />
        </label>
        <button type="submit">Add member</button>
      </form>
    </section>
  );
}
