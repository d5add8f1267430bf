// Log-in: a super-user JWT (`fleet token`, or one from the identity provider when JWKS is
// configured), checked by the cloud with the admin API's rules and exchanged for a session the cloud
// keeps; the browser holds only the session's id, in an HttpOnly cookie, and the token is forgotten.
import { useState } from 'preact/hooks';
import { useAction } from '../../../../../web-common/browser/hooks.ts';
import { api, describeError, setCsrfToken } from '../api.ts';
import type { Session } from '../types.ts';
import { ErrorLine } from '../ui.tsx';

/** `ended`: the session that was open ended by itself (its token expired), said above the form. */
export function Login({ onLogin, ended }: { onLogin: (s: Session) => void; ended?: string | null }) {
  const [token, setToken] = useState('');
  const action = useAction(describeError);
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const session = await api<Session>('POST', '/console/session', { body: { token: token.trim() }, success: 201 });
      setToken('');
      setCsrfToken(session.csrf_token);
      onLogin(session);
    });
  };
  return (
    <main class="login">
      <h1>Fleet console</h1>
      {ended ? (
        <p class="ended" role="status">
          Your session ended at {ended}: a session lasts as long as the token it was opened with. Log in again with a new token.
        </p>
      ) : null}
      <form onSubmit={submit}>
        <label for="token">Super-user token (JWT)</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck={false} value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} required />
        <p class="hint">
          From <code>npx fleet token</code>, or your identity provider. The cloud checks it and opens a session, which ends when the token expires (at most 8 hours) or when you log out; this browser keeps only the session's id, never the token. <code>npx fleet token</code> lasts an hour; <code>npx fleet token --ttl 28800</code> lasts a working day.
        </p>
        <button type="submit" disabled={action.busy || token.trim() === ''}>
          Log in
        </button>
        <ErrorLine error={action.outcome?.text} />
      </form>
    </main>
  );
}
