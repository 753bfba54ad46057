import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { onKeyRejected, readKey } from './api';
import { FilterBar } from './components/filter-bar';
import { Link } from './components/link';
import { EscalationsPage } from './pages/escalations';
import { FindingPage } from './pages/finding';
import { FindingsPage } from './pages/findings';
import { MisclassifiedPage } from './pages/misclassified';
import { OverviewPage } from './pages/overview';
import { RetryWastePage } from './pages/retry-waste';
import { ServersPage } from './pages/servers';
import { SignIn } from './pages/sign-in';
import { SubagentsPage } from './pages/subagents';
import { TracePage } from './pages/trace';
import { filterQuery, filtersOf, traceOrigin, useLocation, windowKey, type Route } from './route';

const NAV: readonly { page: Route['page']; path: string; label: string }[] = [
  { page: 'overview', path: '/', label: 'Overview' },
  { page: 'retry-waste', path: '/retry-waste', label: 'Retry waste' },
  { page: 'misclassified', path: '/misclassified', label: 'Misclassified' },
  { page: 'escalations', path: '/escalations', label: 'Escalations' },
  { page: 'subagents', path: '/subagents', label: 'Subagent coverage' },
  { page: 'servers', path: '/servers', label: 'Servers' },
  { page: 'findings', path: '/findings', label: 'Findings' },
];

/** The tab's title of the pages the views do not name: each says what it is, in a tab or the history. */
const OTHER_TITLES: Partial<Record<Route['page'], string>> = {
  finding: 'Finding',
  trace: 'Run timeline',
  'not-found': 'Page not found',
};

/** Pages that show a window of data, and so the filter bar. */
const FILTERED: readonly Route['page'][] = [...NAV.map((item) => item.page), 'finding'];

export function App() {
  const { route, query, href } = useLocation();
  const [signedIn, setSignedIn] = useState(() => readKey.get() !== null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(
    () =>
      onKeyRejected(() => {
        setNotice('Errata did not accept the saved read key. Sign in again.');
        setSignedIn(false);
      }),
    [],
  );
  // Each navigation re-reads the window, so a relative range ("last 24 hours") ends at the current minute.
  const filters = filtersOf(query);
  const title = signedIn
    ? (NAV.find((item) => item.page === route.page)?.label ?? OTHER_TITLES[route.page])
    : 'Sign in';
  useEffect(() => {
    document.title = title ? `${title} · Errata` : 'Errata';
  }, [title]);
  // After an in-app navigation, focus moves to the new content (as a page load would put it at the top); so it does
  // after signing in, when the form that had it is gone. Signed out, the sign-in form's key field takes it.
  const firstRender = useRef(true);
  useEffect(() => {
    if (firstRender.current) firstRender.current = false;
    else if (signedIn) document.getElementById('main')?.focus({ preventScroll: true });
  }, [route.page, signedIn]);

  if (!signedIn) {
    return (
      <Shell nav={null}>
        <SignIn
          notice={notice}
          onSignedIn={() => {
            setNotice(null);
            setSignedIn(true);
          }}
        />
      </Shell>
    );
  }
  const carried = filterQuery(query);
  const nav = (
    <nav aria-label="Views">
      <ul>
        {NAV.map((item) => {
          const current =
            item.page === route.page ||
            (item.page === 'findings' && route.page === 'finding') ||
            // A run timeline is the page's it was opened from, when the app knows it; else no view's.
            (route.page === 'trace' && item.page === traceOrigin(query.get('back'))?.nav);
          return (
            <li key={item.page}>
              <Link href={item.path + carried} aria-current={current ? 'page' : undefined}>
                {item.label}
              </Link>
            </li>
          );
        })}
      </ul>
      <button
        type="button"
        class="sign-out"
        onClick={() => {
          readKey.clear();
          setSignedIn(false);
        }}
      >
        Sign out
      </button>
    </nav>
  );
  return (
    <Shell nav={nav}>
      {FILTERED.includes(route.page) && (
        // Keyed on the window: back and forward put its own state (a custom range being edited) back in step.
        <FilterBar filters={filters} query={query} key={windowKey(query)} />
      )}
      <Page route={route} filters={filters} query={query} key={href} />
    </Shell>
  );
}

function Page({ route, filters, query }: { route: Route } & PageProps) {
  switch (route.page) {
    case 'overview':
      return <OverviewPage filters={filters} query={query} />;
    case 'retry-waste':
      return <RetryWastePage filters={filters} query={query} />;
    case 'misclassified':
      return <MisclassifiedPage filters={filters} query={query} />;
    case 'escalations':
      return <EscalationsPage filters={filters} query={query} />;
    case 'subagents':
      return <SubagentsPage filters={filters} query={query} />;
    case 'servers':
      return <ServersPage filters={filters} query={query} />;
    case 'findings':
      return <FindingsPage filters={filters} query={query} />;
    case 'finding':
      return <FindingPage id={route.id} filters={filters} query={query} />;
    case 'trace':
      // Its own state per trace: the runs listed and the run shown are one trace's.
      return <TracePage key={route.traceId} traceId={route.traceId} query={query} />;
    case 'not-found':
      return (
        <section class="state">
          <h1>Page not found</h1>
          <p>
            <Link href="/">Go to the overview</Link>
          </p>
        </section>
      );
  }
}

export interface PageProps {
  readonly filters: ReturnType<typeof filtersOf>;
  readonly query: URLSearchParams;
}

function Shell({ nav, children }: { nav: ComponentChildren; children: ComponentChildren }) {
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand" aria-label="Errata overview">
          <span class="brand-mark" aria-hidden="true">
            ∅
          </span>
          Errata
        </Link>
        {nav}
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
