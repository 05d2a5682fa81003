import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { request, setUnauthorizedHandler } from './api.ts';
import { AgentDetailPage } from './pages/agent-detail.tsx';
import { AgentTestsPage } from './pages/agent-tests.tsx';
import { AgentsPage } from './pages/agents.tsx';
import { BillingPage } from './pages/billing.tsx';
import { CallDetailPage } from './pages/call-detail.tsx';
import { CallsPage } from './pages/calls.tsx';
import { CampaignDetailPage, CampaignsPage } from './pages/campaigns.tsx';
import { CollectionDetailPage } from './pages/collection-detail.tsx';
import { CollectionsPage } from './pages/collections.tsx';
import { KeysPage } from './pages/keys.tsx';
import { LoginPage } from './pages/login.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { ProviderKeysPage } from './pages/provider-keys.tsx';
import { SpendingCapsPage } from './pages/spending-caps.tsx';
import { VideoPage } from './pages/video.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { match, navigate, useRoute } from './router.ts';
import { refreshSession, signedOut, useDeveloper } from './session.ts';
import { Link } from './ui.tsx';
import './styles.css';

const NAV: Array<[string, string]> = [
  ['/', 'Overview'],
  ['/keys', 'API keys'],
  ['/provider-keys', 'Provider keys'],
  ['/agents', 'Agents'],
  ['/collections', 'Collections'],
  ['/calls', 'Calls'],
  ['/campaigns', 'Campaigns'],
  ['/video', 'Video jobs'],
  ['/webhooks', 'Webhooks'],
  ['/caps', 'Spending caps'],
  ['/billing', 'Billing'],
];

function route(path: string) {
  let p: Record<string, string> | null;
  if (path === '/' || path === '') return <OverviewPage />;
  if (path === '/keys') return <KeysPage />;
  if (path === '/provider-keys') return <ProviderKeysPage />;
  if (path === '/billing') return <BillingPage />;
  if (path === '/caps') return <SpendingCapsPage />;
  if (path === '/agents') return <AgentsPage />;
  if ((p = match('/agents/:id', path))) return <AgentDetailPage key={p.id} id={p.id!} />;
  if ((p = match('/agents/:id/tests', path))) return <AgentTestsPage key={p.id} id={p.id!} />;
  if (path === '/collections') return <CollectionsPage />;
  if ((p = match('/collections/:id', path))) return <CollectionDetailPage key={p.id} id={p.id!} />;
  if (path === '/calls') return <CallsPage />;
  if ((p = match('/calls/:id', path))) return <CallDetailPage key={p.id} id={p.id!} />;
  if (path === '/campaigns') return <CampaignsPage />;
  if ((p = match('/campaigns/:id', path))) return <CampaignDetailPage key={p.id} id={p.id!} />;
  if (path === '/video') return <VideoPage />;
  if (path === '/webhooks') return <WebhooksPage />;
  return (
    <section>
      <h1 tabIndex={-1}>Not found</h1>
      <p>
        There is no page at this address. <Link href="/">Go to the overview</Link>.
      </p>
    </section>
  );
}

async function logout(everywhere: boolean) {
  await request(everywhere ? '/auth/logout-all' : '/auth/logout', { method: 'POST' }).catch(() => {});
  signedOut();
  navigate('/login', true);
}

function App() {
  const { path } = useRoute();
  const dev = useDeveloper();
  useEffect(() => {
    setUnauthorizedHandler(() => {
      signedOut();
      if (!location.pathname.endsWith('/login')) navigate('/login', true);
    });
    void refreshSession();
  }, []);
  useEffect(() => {
    if (dev === null && path !== '/login') navigate('/login', true);
    if (dev && path === '/login') navigate('/', true);
  }, [dev, path]);

  if (path === '/login' || dev === null)
    return (
      <main id="main" class="login-main">
        <LoginPage />
      </main>
    );
  // While the session is still being checked the page renders and loads its data at the same time (one round
  // trip fewer); a 401 from any of its requests sends the browser to the login page.
  const section = '/' + (path.split('/')[1] ?? '');
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Voice platform</span>
        <span class="who">
          {dev ? (
            <>
              {dev.name} · <span class="tier">{dev.tier}</span>
            </>
          ) : (
            '…'
          )}
        </span>
        <button type="button" onClick={() => void logout(false)}>
          Sign out
        </button>
        <button type="button" class="link-button" onClick={() => void logout(true)}>
          Sign out everywhere
        </button>
      </header>
      <nav aria-label="Portal" class="sidenav">
        <ul>
          {NAV.map(([href, label]) => (
            <li key={href}>
              <Link href={href} current={href === '/' ? path === '/' : section === href}>
                {label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main">{route(path)}</main>
    </div>
  );
}

// A page restored from the back/forward cache (a browser that keeps no-store pages) asks again whether it is
// still signed in, so Back after sign-out lands on the login page rather than the account's data.
addEventListener('pageshow', (e) => {
  if (e.persisted) void refreshSession();
});

render(<App />, document.getElementById('app')!);
