import { useCallback, useEffect, useId, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import type { StationSettingsView, SyncStatus } from '../../../../shared/api.js';
import { call, fieldProblems, getBridge, toBridgeError, type FieldErrors } from '../../bridge.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { errorText, formatDateTime } from '../../format.js';
import { TextField } from '../../components/LabelledField.js';

/** Staff settings of the station: its link to the server and, in the desktop app, its role. */
export function SettingsTab(): ReactElement {
  const [settings, setSettings] = useState<StationSettingsView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    call('settings.get', {})
      .then(setSettings)
      .catch((err: unknown) => setError(errorText(toBridgeError(err))));
  }, []);
  useEffect(() => load(), [load]);
  // Changed on another open page (another tab, the desktop window): read again, so this one
  // does not show a link that is no more.
  useEffect(
    () =>
      getBridge().subscribe((event) => {
        if (event.type === 'settings.changed') load();
      }),
    [load],
  );

  return (
    <div className="column">
      <ErrorMessage message={error} />
      {settings && <ServerLink current={settings.sync} onSaved={load} />}
      {settings?.desktop && <DesktopRole current={settings.desktop} />}
    </div>
  );
}

/** Why a saved link is not online yet, as far as the station knows. */
function notReached(status: SyncStatus): string {
  if (status.keyRefused) return `Not syncing: ${status.keyRefused.replace(/\.$/, '')}`;
  if (status.lastError) return `Not reached yet (${status.lastError})`;
  return 'Not reached yet';
}

function ServerLink({
  current,
  onSaved,
}: {
  current: StationSettingsView['sync'];
  onSaved: () => void;
}): ReactElement {
  const id = useId();
  const [server, setServer] = useState(current.server ?? '');
  const [key, setKey] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<SyncStatus | null>(null);
  const [busy, setBusy] = useState(false);

  // The link starts syncing just after the save answers: follow it until it is online (each
  // second at first, then every 5 s: a server that comes back later is told too), so the notice
  // says "Online" once it is, not "Not reached yet" for good.
  const configured = status?.configured === true;
  const online = status?.online === true;
  useEffect(() => {
    if (!configured || online) return;
    let alive = true;
    let tries = 0;
    let timer = 0;
    const follow = (): void => {
      tries += 1;
      timer = window.setTimeout(
        () => {
          call('sync.status', {})
            .then(
              (next) => {
                if (alive && next.configured) setStatus(next);
              },
              () => undefined,
            )
            .finally(() => {
              if (alive) follow();
            });
        },
        tries <= 30 ? 1000 : 5000,
      );
    };
    follow();
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [configured, online]);

  const save = (next: { server: string; key?: string }): void => {
    setBusy(true);
    setError(null);
    setErrors({});
    call('settings.setSync', next)
      .then((result) => {
        setStatus(result);
        setKey('');
        if (!next.server) setServer('');
        onSaved();
      })
      .catch((err: unknown) => {
        const bridgeError = toBridgeError(err);
        const found = fieldProblems(bridgeError);
        if (Object.keys(found).length) {
          setErrors(found);
          document.getElementById(`${id}-${Object.keys(found)[0]}`)?.focus();
        } else setError(errorText(bridgeError));
      })
      .finally(() => setBusy(false));
  };

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    if (!busy) save({ server, ...(key ? { key } : {}) });
  };

  return (
    <form className="panel" noValidate onSubmit={onSubmit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Server</h2>
      <p>
        {current.server
          ? `This station syncs with ${current.server}.`
          : 'This station runs on its own: nothing is sent anywhere. What it records is kept, and sent once a server is linked.'}
      </p>
      <TextField
        id={`${id}-server`}
        label="Server address"
        hint="For example http://labstation.example.org:8080/"
        messages={errors.server ?? []}
        value={server}
        onChange={setServer}
        autoComplete="off"
        inputMode="url"
      />
      <TextField
        id={`${id}-key`}
        label={current.keySet ? 'Station key (empty: keep the current one)' : 'Station key'}
        hint="Shown once on the server's admin page when the station was registered."
        messages={errors.key ?? []}
        value={key}
        onChange={setKey}
        type="password"
        autoComplete="off"
      />
      <ErrorMessage message={error} />
      {status && (
        <p className="notice" role="status">
          {status.configured
            ? `Saved. ${status.online ? 'Online' : notReached(status)}${
                status.lastSyncAt ? `, last sync ${formatDateTime(status.lastSyncAt)}` : ''
              }.`
            : 'Saved: this station now runs on its own.'}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          Save
        </button>
        {current.server && (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() => save({ server: '' })}
          >
            Disconnect
          </button>
        )}
      </div>
    </form>
  );
}

function DesktopRole({
  current,
}: {
  current: NonNullable<StationSettingsView['desktop']>;
}): ReactElement {
  const id = useId();
  const [port, setPort] = useState(String(current.port));
  const [network, setNetwork] = useState(current.network);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [restarting, setRestarting] = useState(false);

  const portNumber = Number(port);
  const portOk = Number.isInteger(portNumber) && portNumber >= 1 && portNumber <= 65535;

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    if (!portOk) {
      setErrors({ port: ['must be a whole number from 1 to 65535'] });
      document.getElementById(`${id}-port`)?.focus();
      return;
    }
    setErrors({});
    setConfirming(true);
  };

  const switchNow = (): void => {
    setConfirming(false);
    setError(null);
    call('settings.setDesktopMode', {
      mode: 'server',
      port: portNumber,
      network,
      ...(email ? { admin_email: email, admin_password: password } : {}),
    })
      .then(() => setRestarting(true))
      .catch((err: unknown) => {
        const bridgeError = toBridgeError(err);
        const found = fieldProblems(bridgeError);
        if (Object.keys(found).length) {
          setErrors(found);
          document.getElementById(`${id}-${Object.keys(found)[0]}`)?.focus();
        } else setError(errorText(bridgeError));
      });
  };

  if (restarting) {
    return (
      <p className="notice" role="status">
        Labstation restarts as the facility server…
      </p>
    );
  }
  return (
    <form className="panel" noValidate onSubmit={onSubmit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>This PC as the facility server</h2>
      <p>
        The same app can run as the server that stations sync with. The station's data stays here,
        untouched, for when this PC is switched back (from the tray icon).
      </p>
      <TextField
        id={`${id}-port`}
        label="Port"
        messages={errors.port ?? []}
        value={port}
        onChange={setPort}
        inputMode="numeric"
      />
      <div className="field">
        <label className="choice" htmlFor={`${id}-network`}>
          <input
            id={`${id}-network`}
            type="checkbox"
            checked={network}
            onChange={(e) => setNetwork(e.target.checked)}
          />
          Reachable from other computers (not only this PC)
        </label>
      </div>
      <TextField
        id={`${id}-admin_email`}
        label="First admin's e-mail (needed once, for a new server)"
        messages={errors.admin_email ?? []}
        value={email}
        onChange={setEmail}
        type="email"
        autoComplete="off"
      />
      <TextField
        id={`${id}-admin_password`}
        label="First admin's password (10 characters at least)"
        messages={errors.admin_password ?? []}
        value={password}
        onChange={setPassword}
        type="password"
        autoComplete="new-password"
      />
      <ErrorMessage message={error} />
      <div className="actions">
        <button type="submit" className="primary">
          Switch to server mode…
        </button>
      </div>
      <ConfirmDialog
        open={confirming}
        title="Restart as the server?"
        confirmLabel="Switch and restart"
        onConfirm={switchNow}
        onCancel={() => setConfirming(false)}
      >
        <p>This PC stops being a station until it is switched back.</p>
      </ConfirmDialog>
    </form>
  );
}
