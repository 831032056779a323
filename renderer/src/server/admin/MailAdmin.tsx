import { useCallback, useEffect, useId, useState } from 'react';
import type { ReactElement } from 'react';
import { MAIL_STATUSES, type AdminMail, type MailStatus } from '../../../../shared/adminApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { toBridgeError } from '../../bridge.js';
import { capitalize, errorText, formatDateTime } from '../../format.js';
import { readOrder } from '../../readOrder.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';

const KIND_LABELS: Record<AdminMail['kind'], string> = {
  pending_answers: 'Notice',
  pending_reminder: 'Reminder',
};

/**
 * The server's mail outbox: the failed mails first (with why), each sent again with Retry once
 * what stopped it is put right (the SMTP settings, the person's address); as `labstation mail`.
 */
export function MailAdmin(): ReactElement {
  const id = useId();
  const [status, setStatus] = useState<MailStatus | ''>('failed');
  const [mails, setMails] = useState<AdminMail[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState<number | null>(null);

  const fail = (err: unknown): void => {
    const bridgeError = useServerStore.getState().failed(toBridgeError(err));
    if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
  };
  // Each choice of what to show reads the list again, and so does each retry: the reads can
  // answer out of order, and what was asked for last is what shows (its failure too).
  const [reads] = useState(readOrder);
  const load = useCallback(async (): Promise<void> => {
    const asked = reads.ask();
    try {
      const listed = await serverCall('admin.mail.list', status === '' ? {} : { status });
      if (reads.take(asked)) setMails(listed.mails);
    } catch (err) {
      if (reads.take(asked)) throw err;
    }
  }, [status, reads]);
  useEffect(() => {
    load().catch(fail);
  }, [load]);

  const retry = (mail: AdminMail): void => {
    setBusy(mail.id);
    setError(null);
    setNotice(null);
    serverCall('admin.mail.retry', { id: mail.id })
      .then((result) => setNotice(capitalize(result.message)))
      .catch(fail)
      .finally(() => {
        setBusy(null);
        load().catch(fail);
      });
  };

  return (
    <section className="panel" aria-labelledby={`${id}-title`}>
      <div className="history-bar">
        <h2 id={`${id}-title`}>E-mail</h2>
        <label htmlFor={`${id}-status`}>Show</label>
        <select
          id={`${id}-status`}
          value={status}
          onChange={(e) => setStatus(e.target.value as MailStatus | '')}
        >
          {MAIL_STATUSES.map((s) => (
            <option key={s} value={s}>
              {capitalize(s)}
            </option>
          ))}
          <option value="">All</option>
        </select>
      </div>
      <p className="hint">
        Mails that could not be sent stay failed. Put right what the error names (the mail
        server&apos;s settings, the person&apos;s address under People), then press Retry: the mail
        goes to the address the person has now.
      </p>
      <ErrorMessage message={error} />
      <p role="status">{notice}</p>
      {mails === null ? (
        <p role="status">Loading…</p>
      ) : mails.length === 0 ? (
        <p className="hint">No {status === '' ? '' : `${status} `}mail.</p>
      ) : (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                {['Mail', 'Status', 'Person', 'To', 'Tries', 'Queued', 'Last error', ''].map(
                  (h, i) => (
                    <th key={i} scope="col">
                      {h}
                    </th>
                  ),
                )}
              </tr>
            </thead>
            <tbody>
              {mails.map((m) => (
                <tr key={m.id}>
                  <th scope="row">{`${KIND_LABELS[m.kind]} ${m.id}`}</th>
                  <td>{m.status}</td>
                  <td>{m.user ?? ''}</td>
                  <td>{m.to || 'no address'}</td>
                  <td>{m.attempts}</td>
                  <td>{formatDateTime(m.created_at)}</td>
                  <td>{m.last_error ?? ''}</td>
                  <td>
                    {m.status === 'failed' && (
                      <button
                        type="button"
                        aria-label={`Retry mail ${m.id}`}
                        disabled={busy !== null}
                        onClick={() => retry(m)}
                      >
                        Retry
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
