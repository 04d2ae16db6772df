import { useState } from 'preact/hooks';
import { signIn, type Session } from './api.js';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signIn(user, password));
    } catch (failure) {
      setError((failure as Error).message);
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Content repository</h1>
      <form onSubmit={submit} aria-describedby={error ? 'sign-in-error' : undefined}>
        <h2>Sign in</h2>
        <label>
          User name
          <input name="user" autocomplete="username" required value={user} onInput={(event) => setUser(event.currentTarget.value)} />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required value={password} onInput={(event) => setPassword(event.currentTarget.value)} />
        </label>
        {error && (
          <p id="sign-in-error" class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
