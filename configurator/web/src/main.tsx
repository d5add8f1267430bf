// The configurator's page: a hash router over the controllers page, one controller's sections, and
// the site's client settings. No inline script anywhere (the CSP allows only this file).
import { render } from 'preact';
import { useHash } from '../../../web-common/browser/hooks.ts';
import { ControllersPage } from './pages/controllers.tsx';
import { ControllerPage, isTab } from './pages/controller.tsx';
import { SiteSettingsPage } from './pages/site-settings.tsx';
import './styles.css';

function Route({ hash }: { hash: string }) {
  const m = /^#\/controllers\/(\d{1,10})(?:\/(\w+))?$/.exec(hash);
  if (m) return <ControllerPage key={m[1]} id={Number(m[1])} tab={isTab(m[2]) ? m[2] : 'configuration'} />;
  if (hash === '#/settings') return <SiteSettingsPage />;
  return <ControllersPage />;
}

function App() {
  const hash = useHash();
  const here = hash === '#/settings' ? 'settings' : 'controllers';
  return (
    <>
      <a
        class="skip"
        href="#content"
        onClick={(e) => {
          // The hash is the router's: move the focus instead of navigating.
          e.preventDefault();
          document.getElementById('content')?.focus();
        }}
      >
        Skip to the content
      </a>
      <header class="top">
        <span class="brand">Fleet configurator</span>
        <nav aria-label="Site">
          <a href="#/" aria-current={here === 'controllers' ? 'page' : undefined}>
            Controllers
          </a>
          <a href="#/settings" aria-current={here === 'settings' ? 'page' : undefined}>
            Client settings
          </a>
        </nav>
      </header>
      <div id="content" tabIndex={-1}>
        <Route hash={hash} />
      </div>
    </>
  );
}

const root = document.getElementById('app')!;
// The static "Loading…" line goes: Preact renders into an empty element.
root.textContent = '';
render(<App />, root);
