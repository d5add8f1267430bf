// The operator console (docs/operator-console.md): one page, hash routes, the admin API behind every
// action. Preact renders every value as text.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useHash } from '../../../../web-common/browser/hooks.ts';
import { api, setCsrfToken, whenUnauthorized } from './api.ts';
import { AppConfig } from './pages/appconfig.tsx';
import { Audit } from './pages/audit.tsx';
import { DevicePage } from './pages/device.tsx';
import { Devices } from './pages/devices.tsx';
import { FleetHealthPage } from './pages/health.tsx';
import { Login } from './pages/login.tsx';
import { ReleasePage } from './pages/release.tsx';
import { Releases } from './pages/releases.tsx';
import { placeOf, type Place } from './routes.ts';
import type { Session } from './types.ts';
import { ErrorLine, when } from './ui.tsx';
import './styles.css';

const PAGES = [
  { hash: '#/releases', title: 'Releases', page: 'releases' },
  { hash: '#/devices', title: 'Devices', page: 'devices' },
  { hash: '#/health', title: 'Health', page: 'health' },
  { hash: '#/appconfig', title: 'Appconfig', page: 'appconfig' },
  { hash: '#/audit', title: 'Audit log', page: 'audit' },
] as const;

/** The page of a place; a device's page is under Devices, a release's under Releases. */
function pageOf(place: Place) {
  switch (place.page) {
    case 'device':
      return { nav: 'devices', body: <DevicePage key={place.uuid} uuid={place.uuid} /> };
    case 'release':
      return { nav: 'releases', body: <ReleasePage key={`${place.track.class}/${place.track.product_hex}/${place.track.application}/${place.version}`} track={place.track} version={place.version} /> };
    case 'releases':
      return { nav: place.page, body: <Releases /> };
    case 'devices':
      return { nav: place.page, body: <Devices key={JSON.stringify(place.filter)} initial={place.filter} /> };
    case 'health':
      return { nav: place.page, body: <FleetHealthPage /> };
    case 'appconfig':
      return { nav: place.page, body: <AppConfig /> };
    case 'audit':
      return { nav: place.page, body: <Audit /> };
  }
}

function App() {
  // undefined while asking whether a session is open (after a reload), null when logged out.
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  // When the open session ended by itself (the cloud answered 401): its end, for the log-in page to say.
  const [ended, setEnded] = useState<string | null>(null);
  const open = useRef<Session | null | undefined>(undefined);
  open.current = session;
  const hash = useHash();
  useEffect(() => {
    whenUnauthorized(() => {
      setCsrfToken(null);
      if (open.current) setEnded(when(open.current.expires_at));
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
  if (session === null)
    return (
      <Login
        ended={ended}
        onLogin={(s) => {
          setEnded(null);
          setSession(s);
        }}
      />
    );
  const page = pageOf(placeOf(hash));
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
            <a key={p.hash} href={p.hash} aria-current={p.page === page.nav ? 'page' : undefined}>
              {p.title}
            </a>
          ))}
        </nav>
        <p class="who">
          Signed in as <span class="subject">{session.subject ?? '(no subject)'}</span>{' '}
          <span class="until" title="the session lasts as long as the token it was opened with">until {when(session.expires_at).slice(11)}</span>{' '}
          <button type="button" onClick={logout}>
            Log out
          </button>
        </p>
      </header>
      <ErrorLine error={error} />
      <main>
        {page.body}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
