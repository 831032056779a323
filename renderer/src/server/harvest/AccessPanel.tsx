import { useCallback, useEffect, useId, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import type { AdminUser } from '../../../../shared/adminApi.js';
import type { GrantOut, InstrumentOut } from '../../../../shared/harvest/management.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { toBridgeError } from '../../bridge.js';
import { errorText, formatDateTime } from '../../format.js';
import { readOrder } from '../../readOrder.js';
import { useAdminStore } from '../admin/store.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';

const personName = (u: AdminUser | undefined, id: number): string => {
  if (!u) return `person ${id}`;
  const name = `${u.first_name} ${u.last_name}`.trim();
  return name ? `${name} (${u.email || u.username})` : u.email || u.username;
};

/**
 * Who may read the instrument's files and their transfers on the Files page. Admins read
 * every instrument's without a grant.
 */
export function AccessPanel({ instrument }: { instrument: InstrumentOut }): ReactElement {
  const id = useId();
  const users = useAdminStore((s) => s.users);
  const [grants, setGrants] = useState<GrantOut[] | null>(null);
  const [chosen, setChosen] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<number | null>(null);

  const fail = useCallback((err: unknown): void => {
    const bridgeError = useServerStore.getState().failed(toBridgeError(err));
    if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
  }, []);
  // The grant form works while the first read is under way, and a grant or revoke reads the
  // list again: what was asked for last is what shows (its failure too).
  const [reads] = useState(readOrder);
  const reload = useCallback(async (): Promise<void> => {
    const asked = reads.ask();
    try {
      const result = await serverCall('admin.access.list', { instrument_id: instrument.id });
      if (reads.take(asked)) setGrants(result.grants);
    } catch (err) {
      if (reads.take(asked)) throw err;
    }
  }, [instrument.id, reads]);

  useEffect(() => {
    reload().catch(fail);
  }, [reload, fail]);

  const byId = new Map(users.map((u) => [u.id, u]));
  const granted = new Set((grants ?? []).map((g) => g.user_id));
  const candidates = users.filter((u) => u.is_active && !granted.has(u.id));

  const act = (call: () => Promise<string>): void => {
    setBusy(true);
    setError(null);
    setNotice(null);
    call()
      .then(async (message) => {
        setNotice(message);
        await reload();
      })
      .catch(fail)
      .finally(() => setBusy(false));
  };

  const grant = (e: FormEvent): void => {
    e.preventDefault();
    if (busy) return;
    if (!chosen) {
      setError('Choose whom to grant access.');
      document.getElementById(`${id}-user`)?.focus();
      return;
    }
    const userId = Number(chosen);
    act(async () => {
      await serverCall('admin.access.grant', { instrument_id: instrument.id, user_id: userId });
      setChosen('');
      return `${personName(byId.get(userId), userId)} may now read the files of ${instrument.name}.`;
    });
  };

  const revoke = (userId: number): void => {
    setRevoking(null);
    act(async () => {
      await serverCall('admin.access.revoke', { instrument_id: instrument.id, user_id: userId });
      return `${personName(byId.get(userId), userId)} no longer reads the files of ${instrument.name}.`;
    });
  };

  return (
    <section className="panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{`Access to ${instrument.name}`}</h2>
      <p className="help">
        These people see the instrument&apos;s files and transfers on the Files page. Admins see
        every instrument&apos;s.
      </p>
      {grants === null && !error && <p role="status">Loading…</p>}
      {grants?.length === 0 && <p className="hint">Nobody has been granted access yet.</p>}
      {grants && grants.length > 0 && (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Granted</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {grants.map((g) => (
                <tr key={g.user_id}>
                  <td>{personName(byId.get(g.user_id), g.user_id)}</td>
                  <td>{formatDateTime(g.granted_at)}</td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Revoke access of ${personName(byId.get(g.user_id), g.user_id)}`}
                      onClick={() => setRevoking(g.user_id)}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form className="filters" noValidate onSubmit={grant} aria-label="Grant access">
        <div className="field">
          <label htmlFor={`${id}-user`}>Person to grant</label>
          <select id={`${id}-user`} value={chosen} onChange={(e) => setChosen(e.target.value)}>
            <option value="">Choose a person…</option>
            {candidates.map((u) => (
              <option key={u.id} value={u.id}>
                {`${personName(u, u.id)}${u.role === 'admin' ? ' — admin' : ''}`}
              </option>
            ))}
          </select>
        </div>
        <div className="actions">
          {/* Not disabled while busy (grant() waits): a disabled button drops the focus. */}
          <button type="submit" aria-disabled={busy || undefined}>
            Grant access
          </button>
        </div>
      </form>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorMessage message={error} />
      {revoking !== null && (
        <ConfirmDialog
          open
          title="Revoke this access?"
          confirmLabel="Revoke"
          busy={busy}
          onConfirm={() => revoke(revoking)}
          onCancel={() => setRevoking(null)}
        >
          <p>{`${personName(byId.get(revoking), revoking)} stops seeing the files of ${instrument.name}.`}</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
