// Log-in: a super-user JWT (`fleet token`, or one from the identity provider when JWKS is
// configured), checked by the cloud with the admin API's rules, kept in an HttpOnly cookie.
import { useState } from 'preact/hooks';
import { api, setCsrfToken } from '../api.ts';
import type { Session } from '../types.ts';
import { ErrorLine } from '../ui.tsx';

export function Login({ onLogin }: { onLogin: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api<Session>('POST', '/console/session', { token: token.trim() });
      setToken('');
      setCsrfToken(session.csrf_token);
      onLogin(session);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>Fleet console</h1>
      <form onSubmit={submit}>
        <label for="token">Super-user token (JWT)</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck={false} value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} required />
        <p class="hint">
          From <code>npx fleet token</code>, or your identity provider. It is kept in an HttpOnly cookie for this browser session, never in the page's storage.
        </p>
        <button type="submit" disabled={busy || token.trim() === ''}>
          Log in
        </button>
        <ErrorLine error={error} />
      </form>
    </main>
  );
}
