import { useEffect, useId, useState } from 'react';
import type { ReactElement } from 'react';
import type { ScheduleOut, TriggerOut } from '../../../../shared/harvest/management.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { toBridgeError } from '../../bridge.js';
import { errorText, formatDateTime } from '../../format.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';
import { deploymentWords } from './deployment.js';
import { useHarvestAdminStore } from './store.js';

/** How often the page reads the runs again while one is queued or running. */
const REFRESH_MS = 3000;

/**
 * A schedule's deployment on its station, the Trigger button and the last runs. The runs are
 * read again every few seconds while one waits or runs, so the counts appear as the station
 * reports them.
 */
export function ScheduleRuns({ schedule }: { schedule: ScheduleOut }): ReactElement {
  const id = useId();
  const reloadSchedules = useHarvestAdminStore((s) => s.reloadSchedules);
  const [answer, setAnswer] = useState<TriggerOut | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { deployment } = schedule;
  const active = deployment.runs.some((r) => r.state === 'queued' || r.state === 'running');

  useEffect(() => {
    if (!active) return;
    const timer = window.setInterval(() => void reloadSchedules(), REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [active, reloadSchedules]);

  const trigger = (): void => {
    if (busy) return;
    setBusy(true);
    setError(null);
    setAnswer(null);
    serverCall('admin.schedules.trigger', { id: schedule.id })
      .then(async (result) => {
        setAnswer(result);
        await reloadSchedules();
      })
      .catch((err: unknown) => {
        const bridgeError = useServerStore.getState().failed(toBridgeError(err));
        if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
      })
      .finally(() => setBusy(false));
  };

  return (
    <section className="panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Deployment and runs</h2>
      <dl className="details">
        <dt>Station</dt>
        <dd>{deployment.station?.name ?? 'none: the instrument has no service account'}</dd>
        <dt>State</dt>
        <dd data-testid="deployment-state">{deploymentWords(deployment)}</dd>
        <dt>Deployed</dt>
        <dd>{deployment.deployed_at ? formatDateTime(deployment.deployed_at) : 'not yet'}</dd>
        <dt>Last run</dt>
        <dd>{deployment.last_run_at ? formatDateTime(deployment.last_run_at) : 'none yet'}</dd>
        <dt>Next run</dt>
        <dd>{deployment.next_run_at ? formatDateTime(deployment.next_run_at) : 'not known'}</dd>
        {deployment.error && (
          <>
            <dt>Problem</dt>
            <dd className="error">{deployment.error}</dd>
          </>
        )}
      </dl>
      <div className="actions">
        {/* Not disabled while busy: a disabled button drops the focus to the page. */}
        <button
          type="button"
          className="primary"
          aria-disabled={busy || undefined}
          onClick={trigger}
        >
          {busy ? 'Triggering…' : 'Trigger now'}
        </button>
      </div>
      {answer && (
        <p className={answer.queued_offline ? 'notice' : 'notice success'} role="status">
          {answer.queued_offline
            ? `Queued for an offline station: ${answer.detail}.`
            : `Queued: ${answer.detail}.`}
        </p>
      )}
      <ErrorMessage message={error} />
      <h3>Last runs</h3>
      {active && (
        <p className="help" aria-live="polite">
          A run is waiting or running; this list updates by itself.
        </p>
      )}
      {deployment.runs.length === 0 ? (
        <p className="hint">No runs yet.</p>
      ) : (
        <div className="table-scroll">
          <table aria-label="Last runs">
            <thead>
              <tr>
                <th scope="col">Asked</th>
                <th scope="col">How</th>
                <th scope="col">State</th>
                <th scope="col">Started</th>
                <th scope="col">Finished</th>
                <th scope="col">Completed</th>
                <th scope="col">Skipped</th>
                <th scope="col">Failed</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {deployment.runs.map((run) => (
                <tr key={run.id}>
                  <td>{formatDateTime(run.requested_at)}</td>
                  <td>{run.trigger === 'manual' ? 'triggered' : 'on schedule'}</td>
                  <td>{run.state}</td>
                  <td>{formatDateTime(run.started_at)}</td>
                  <td>{formatDateTime(run.finished_at)}</td>
                  <td>{run.files_completed}</td>
                  <td>{run.files_skipped}</td>
                  <td>{run.files_failed}</td>
                  <td>{run.error}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
