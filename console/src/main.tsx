import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { session, signOut, type Session } from './api.js';
import { Administration } from './admin.js';
import { Browser } from './browser.js';
import { JobsProvider, JobsView } from './jobs.js';
import { Notifications, NotificationsProvider } from './notifications.js';
import { SearchView } from './search.js';
import { SignIn } from './sign-in.js';
import './style.css';

const views = { browse: 'Repository', search: 'Search', jobs: 'Jobs', admin: 'Administration' } as const;
type View = keyof typeof views;

const viewOfHash = (): View => {
  const name = location.hash.slice(1);
  return name in views ? (name as View) : 'browse';
};

function App() {
  const [user, setUser] = useState<Session | undefined>(session());
  const [view, setView] = useState<View>(viewOfHash());
  const [repository, setRepository] = useState('default');
  useEffect(() => {
    const onHash = () => setView(viewOfHash());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  if (!user) return <SignIn onSignedIn={setUser} />;
  const admin = user.roles.includes('ADMIN');
  const shown = (Object.keys(views) as View[]).filter((name) => name !== 'admin' || admin);
  return (
    <NotificationsProvider>
      <JobsProvider repository={repository}>
        <header class="bar">
          <h1>Content repository</h1>
          <nav aria-label="Views">
            {shown.map((name) => (
              <a href={`#${name}`} aria-current={view === name ? 'page' : undefined}>
                {views[name]}
              </a>
            ))}
          </nav>
          <span class="who">
            {user.userName}
            <button type="button" onClick={() => signOut().finally(() => setUser(undefined))}>
              Sign out
            </button>
          </span>
        </header>
        <Notifications />
        <main>
          {view === 'browse' && <Browser repository={repository} onRepository={setRepository} admin={admin} />}
          {view === 'search' && <SearchView repository={repository} />}
          {view === 'jobs' && <JobsView repository={repository} />}
          {view === 'admin' && admin && <Administration repository={repository} />}
        </main>
      </JobsProvider>
    </NotificationsProvider>
  );
}

render(<App />, document.getElementById('console')!);
