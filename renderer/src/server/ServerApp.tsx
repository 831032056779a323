import { useCallback, useEffect, useRef, useState } from 'react';
import type { ReactElement } from 'react';
import { isStaffRole, type ServerPendingForm } from '../../../shared/api.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { errorText } from '../format.js';
import { AdminPage } from './admin/AdminPage.js';
import { ExperimentsPage } from './experiments/ExperimentsPage.js';
import { FilesPage } from './files/FilesPage.js';
import { LoginScreen } from './LoginScreen.js';
import { PendingFormPanel, type ReloadOptions } from './PendingFormPanel.js';
import { ReservationsPage } from './reservations/ReservationsPage.js';
import {
  adminHref,
  EXPERIMENTS_HREF,
  FILES_HREF,
  parseRoute,
  RESERVATIONS_HREF,
  type ServerRoute,
} from './route.js';
import { serverCall } from './serverBridge.js';
import { useServerStore } from './store.js';
import { UsageList } from './UsageList.js';

function useRoute(): ServerRoute {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = (): void => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

const PAGE_TITLES: Record<ServerRoute['page'], string> = {
  home: 'My usage',
  pending: 'My usage',
  files: 'Files',
  experiments: 'Experiments',
  reservations: 'Reservations',
  admin: 'Administration',
};

/**
 * The server's UI in a browser: log in, answer pending post-usage questions, see usage, read
 * harvested files, book tools and areas; admins manage the facility.
 */
export function ServerApp(): ReactElement {
  const account = useServerStore((s) => s.account);
  const restoring = useServerStore((s) => s.restoring);
  const logout = useServerStore((s) => s.logout);
  const route = useRoute();

  useEffect(() => {
    void useServerStore.getState().restore();
  }, []);

  return (
    <div className="app server-app">
      <header className="app-header">
        <div>
          <p className="eyebrow">Labstation server</p>
          <h1>{account ? PAGE_TITLES[route.page] : 'Labstation'}</h1>
        </div>
        {account && (
          <div className="header-actions session-bar">
            <nav aria-label="Pages" className="page-links">
              <a
                href="#/"
                aria-current={
                  route.page === 'home' || route.page === 'pending' ? 'page' : undefined
                }
              >
                My usage
              </a>
              <a href={FILES_HREF} aria-current={route.page === 'files' ? 'page' : undefined}>
                Files
              </a>
              <a
                href={RESERVATIONS_HREF}
                aria-current={route.page === 'reservations' ? 'page' : undefined}
              >
                Reservations
              </a>
              {isStaffRole(account.role) && (
                <a
                  href={EXPERIMENTS_HREF}
                  aria-current={route.page === 'experiments' ? 'page' : undefined}
                >
                  Experiments
                </a>
              )}
              {account.role === 'admin' && (
                <a
                  href={adminHref('users')}
                  aria-current={route.page === 'admin' ? 'page' : undefined}
                >
                  Administration
                </a>
              )}
            </nav>
            <span data-testid="account-name">
              {`${account.first_name} ${account.last_name}`.trim() || account.email}
            </span>
            <button type="button" className="secondary" onClick={() => logout()}>
              Log out
            </button>
          </div>
        )}
      </header>
      {restoring ? (
        <p role="status">Loading…</p>
      ) : !account ? (
        <main>
          <LoginScreen />
        </main>
      ) : route.page === 'files' ? (
        <FilesPage />
      ) : route.page === 'reservations' ? (
        <ReservationsPage />
      ) : route.page === 'experiments' ? (
        isStaffRole(account.role) ? (
          <ExperimentsPage />
        ) : (
          <main>
            <p className="notice">
              Experiment records are for staff. <a href="#/">Back to my usage</a>
            </p>
          </main>
        )
      ) : route.page === 'pending' ? (
        <PendingRoute key={route.usage} usage={route.usage} />
      ) : route.page === 'admin' ? (
        account.role === 'admin' ? (
          <AdminPage section={route.section} />
        ) : (
          <main>
            <p className="notice">
              Administration is for admins. <a href="#/">Back to my usage</a>
            </p>
          </main>
        )
      ) : (
        <Home />
      )}
    </div>
  );
}

/** A sent form's confirmation: a new object each time, so that each one takes the focus. */
interface Sent {
  message: string;
}

/**
 * What the page says once a pending form is sent. The form goes away with the button that had
 * the focus, so the focus comes here (else it falls to the page body and a keyboard user starts
 * again from the top).
 */
function SentConfirmation({ sent }: { sent: Sent | null }): ReactElement | null {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (sent) ref.current?.focus();
  }, [sent]);
  if (!sent) return null;
  return (
    <p ref={ref} className="notice" role="status" tabIndex={-1}>
      {sent.message}
    </p>
  );
}

/** What the page says of a pending form that Reload found answered elsewhere. */
function answeredElsewhere(item: ServerPendingForm): string {
  return `The post-usage questions of your usage of ${item.usage.tool_name} were answered elsewhere meanwhile.`;
}

function Home(): ReactElement {
  const pending = useServerStore((s) => s.pending);
  const events = useServerStore((s) => s.events);
  const recent = useServerStore((s) => s.recent);
  const recentToValidate = useServerStore((s) => s.recentToValidate);
  const showToValidate = useServerStore((s) => s.showToValidate);
  const recentToolId = useServerStore((s) => s.recentToolId);
  const tools = useServerStore((s) => s.tools);
  const showTool = useServerStore((s) => s.showTool);
  const recentMore = useServerStore((s) => s.recentMore);
  const showOlder = useServerStore((s) => s.showOlder);
  const role = useServerStore((s) => s.account?.role);
  const loading = useServerStore((s) => s.loading);
  const error = useServerStore((s) => s.error);
  const refresh = useServerStore((s) => s.refresh);
  const [sent, setSent] = useState<Sent | null>(null);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const onDone = (message: string): void => {
    setSent({ message });
    void refresh();
  };

  // Reload goes away with its form (answered elsewhere) or with the form as it was (a new
  // version is drawn anew), each time with the focus: the page then says which, or the new
  // form's heading takes the focus.
  const [reloaded, setReloaded] = useState<{ usage: string } | null>(null);
  const onReload = (item: ServerPendingForm, options?: ReloadOptions): void => {
    void refresh().then(() => {
      const usage = item.usage.uuid;
      if (useServerStore.getState().pending.some((p) => p.usage.uuid === usage)) {
        if (options?.focus !== false) setReloaded({ usage });
      } else {
        setSent({ message: answeredElsewhere(item) });
      }
    });
  };

  return (
    <main>
      <SentConfirmation sent={sent} />
      <ErrorMessage message={error} />
      <section aria-labelledby="pending-list-title">
        <h2 id="pending-list-title" className="visually-hidden">
          Pending post-usage questions
        </h2>
        {pending.length === 0 && !loading && (
          <p className="hint">No post-usage questions are waiting for your answers.</p>
        )}
        {pending.map((item) => (
          <PendingFormPanel
            key={`${item.usage.uuid}-${item.version}`}
            item={item}
            onDone={onDone}
            onReload={(options) => onReload(item, options)}
            focusRequest={reloaded?.usage === item.usage.uuid ? reloaded : null}
          />
        ))}
      </section>
      <UsageList events={events} />
      {isStaffRole(role) && (
        <UsageList
          events={recent}
          title="Recent usage of the facility"
          showUser
          toValidate={{ only: recentToValidate, choose: (only) => void showToValidate(only) }}
          tool={{ tools, id: recentToolId, choose: (toolId) => void showTool(toolId) }}
          older={{ more: recentMore, show: showOlder }}
        />
      )}
    </main>
  );
}

/** `#/pending/<usage uuid>`: the link of the e-mail opens that event's form directly. */
function PendingRoute({ usage }: { usage: string }): ReactElement {
  const failed = useServerStore((s) => s.failed);
  const refresh = useServerStore((s) => s.refresh);
  const [form, setForm] = useState<ServerPendingForm | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<Sent | null>(null);

  const load = useCallback(() => {
    setError(null);
    serverCall('usage.pendingForm', { usage })
      .then((result) => setForm(result.form))
      .catch((err: unknown) => {
        const bridgeError = failed(err);
        setForm(null);
        if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
      });
  }, [usage, failed]);

  useEffect(() => load(), [load]);

  // As on the home page: Reload goes away with the form as it was (its new version is drawn
  // anew), or with the form answered elsewhere, each time with the focus on it. The new form's
  // heading takes the focus, or what the page says of the form answered. A reload that fails
  // otherwise (the server unreachable) keeps the form, its answers and Reload.
  const [reloaded, setReloaded] = useState<object | null>(null);
  const onReload = (item: ServerPendingForm, options?: ReloadOptions): void => {
    setError(null);
    serverCall('usage.pendingForm', { usage })
      .then((result) => {
        setForm(result.form);
        if (options?.focus !== false) setReloaded({});
      })
      .catch((err: unknown) => {
        const bridgeError = failed(err);
        if (bridgeError.code === 'conflict') {
          // No longer pending (usage.pendingForm): answered meanwhile.
          setForm(null);
          setSent({ message: answeredElsewhere(item) });
        } else if (bridgeError.code !== 'unauthenticated') {
          setError(errorText(bridgeError));
        }
      });
  };

  const onDone = (message: string): void => {
    setSent({ message });
    setForm(null);
    void refresh();
  };

  return (
    <main>
      <SentConfirmation sent={sent} />
      <ErrorMessage message={error} />
      {form && (
        <PendingFormPanel
          key={`${form.usage.uuid}-${form.version}`}
          item={form}
          onDone={onDone}
          onReload={(options) => onReload(form, options)}
          focusRequest={reloaded}
        />
      )}
      {!form && !sent && !error && <p role="status">Loading…</p>}
      <p>
        <a href="#/">Back to my usage</a>
      </p>
    </main>
  );
}
