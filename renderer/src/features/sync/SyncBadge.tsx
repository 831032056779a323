import { useEffect, useState } from 'react';
import type { ReactElement } from 'react';
import type { SyncStatus } from '../../../../shared/api.js';
import { clockSkewWarning } from '../../../../shared/clock.js';
import { call, getBridge } from '../../bridge.js';
import { formatDateTime } from '../../format.js';

const POLL_MS = 5_000;

/** The station's link to the server: online or not, last successful sync, records waiting. */
export function SyncBadge(): ReactElement | null {
  const [status, setStatus] = useState<SyncStatus | null>(null);

  useEffect(() => {
    let alive = true;
    const load = (): void => {
      call('sync.status', {}).then(
        (next) => alive && setStatus(next),
        () => alive && setStatus(null),
      );
    };
    load();
    const timer = window.setInterval(load, POLL_MS);
    // A link changed (here or on another page): said at once, not at the next poll.
    const unsubscribe = getBridge().subscribe((event) => {
      if (event.type === 'settings.changed') load();
    });
    return () => {
      alive = false;
      window.clearInterval(timer);
      unsubscribe();
    };
  }, []);

  if (!status) return null;
  const waiting = `${status.waiting} ${status.waiting === 1 ? 'record' : 'records'} waiting`;
  if (!status.configured) {
    // Nothing is sent: what it records is kept for a server linked later, not "waiting".
    const kept = `${status.waiting} ${status.waiting === 1 ? 'record' : 'records'} kept for a server`;
    return (
      <p className="sync-badge" role="status" aria-label="Sync">
        Standalone station · {status.waiting === 0 ? 'no server' : kept}
      </p>
    );
  }
  const last = status.lastSyncAt
    ? `last sync ${formatDateTime(status.lastSyncAt)}`
    : 'never synced';
  // Records the server refused wait aside; the others still go. Staff logged on see why (the
  // core gives the reason to staff only).
  const refused =
    status.refused > 0
      ? ` · ${status.refused} refused by the server${status.refusedReason ? `: ${status.refusedReason}` : ''}`
      : '';
  // A clock that is off bills the wrong minutes: said to whoever stands there, so it gets set.
  const skew = clockSkewWarning(status.clockSkewSeconds);
  // The server answers, and refuses this station's key (401), or another Labstation holds it
  // (409): not an outage that passes, so said in words, not left to a tooltip.
  const keyRefused = status.online ? null : status.keyRefused;
  return (
    <p
      className={`sync-badge ${status.online ? 'online' : 'offline'}${skew ? ' clock-off' : ''}`}
      role="status"
      aria-label="Sync"
      title={status.lastError ?? undefined}
    >
      {status.online ? 'Online' : keyRefused ? `Not syncing: ${keyRefused}` : 'Offline'} · {last} ·{' '}
      {waiting}
      {refused}
      {skew && ` · ${skew.charAt(0).toUpperCase()}${skew.slice(1)}`}
    </p>
  );
}
