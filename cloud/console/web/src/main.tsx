// The operator console (docs/operator-console.md): one page, hash routes, the admin API behind every
// action. Preact renders every value as text.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useHash } from '../../../../web-common/browser/hooks.ts';
import { api, setCsrfToken, whenUnauthorized } from './api.ts';
import { AppConfig } from './pages/appconfig.tsx';
import { Audit } from './pages/audit.tsx';
import { Devices } from './pages/devices.tsx';
import { Login } from './pages/login.tsx';
import { Releases } from './pages/releases.tsx';
import type { Session } from './types.ts';
import { ErrorLine } from './ui.tsx';
import './styles.css';

const PAGES = [
  { hash: '#/releases', title: 'Releases', Page: Releases },
  { hash: '#/devices', title: 'Devices', Page: Devices },
  { hash: '#/appconfig', title: 'Appconfig', Page: AppConfig },
  { hash: '#/audit', title: 'Audit log', Page: Audit },
] as const;

function App() {
  // undefined while asking whether a session is open (after a reload), null when logged out.
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const hash = useHash();
  useEffect(() => {
    whenUnauthorized(() => {
      setCsrfToken(null);
      setSession(null);
    });
    api<Session>('GET', '/console/session').then(
      (s) => {
        setCsrfToken(s.csrf_token);
        setSession(s);
      },
      () => setSession(null),
    );
  }, []);
  if (session === undefined) return <p class="loading">Loading the console…</p>;
  if (session === null) return <Login onLogin={setSession} />;
  const page = PAGES.find((p) => p.hash === hash) ?? PAGES[0];
  const logout = async () => {
    try {
      await api('DELETE', '/console/session', { success: 204 });
      setCsrfToken(null);
      setSession(null);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <>
      <header>
        <h1>Fleet console</h1>
        <nav aria-label="pages">
          {PAGES.map((p) => (
            <a key={p.hash} href={p.hash} aria-current={p === page ? 'page' : undefined}>
              {p.title}
            </a>
          ))}
        </nav>
        <p class="who">
          Signed in as <span class="subject">{session.subject ?? '(no subject)'}</span>{' '}
          <button type="button" onClick={logout}>
            Log out
          </button>
        </p>
      </header>
      <ErrorLine error={error} />
      <main>
        <page.Page />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
