// Log-in: a super-user JWT (`fleet token`, or one from the identity provider when JWKS is
// configured), checked by the cloud with the admin API's rules and exchanged for a session the cloud
// keeps; the browser holds only the session's id, in an HttpOnly cookie, and the token is forgotten.
import { useState } from 'preact/hooks';
import { useAction } from '../../../../../web-common/browser/hooks.ts';
import { api, describeError, setCsrfToken } from '../api.ts';
import type { Session } from '../types.ts';
import { ErrorLine } from '../ui.tsx';

export function Login({ onLogin }: { onLogin: (s: Session) => void }) {
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
      <form onSubmit={submit}>
        <label for="token">Super-user token (JWT)</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck={false} value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} required />
        <p class="hint">
          From <code>npx fleet token</code>, or your identity provider. The cloud checks it and opens a session, which ends when the token expires or when you log out; this browser keeps only the session's id, never the token.
        </p>
        <button type="submit" disabled={action.busy || token.trim() === ''}>
          Log in
        </button>
        <ErrorLine error={action.outcome?.text} />
      </form>
    </main>
  );
}
