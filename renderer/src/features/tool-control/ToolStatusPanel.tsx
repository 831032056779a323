import type { ReactElement } from 'react';
import type { ToolStatus } from '../../../../shared/api.js';
import { formatDateTime } from '../../format.js';

const STATE_LABEL = { idle: 'Idle', in_use: 'In use', shutdown: 'Shut down' } as const;

/** What the tool is doing now, in words; announced when it changes. */
export function ToolStatusPanel({ status }: { status: ToolStatus | null }): ReactElement {
  if (!status) {
    return (
      <section className="panel status" aria-label="Tool status">
        <p role="status">Reading the tool's state…</p>
      </section>
    );
  }
  const { state, active, shutdown } = status;
  return (
    <section className={`panel status state-${state}`} aria-labelledby="status-title">
      <h2 id="status-title">Tool status</h2>
      <div role="status" aria-live="polite">
        <p className="state-badge" data-testid="tool-state">
          {STATE_LABEL[state]}
        </p>
        {state === 'idle' && status.operational && <p>The tool is free.</p>}
        {!status.operational && (
          <p className="notice" data-testid="not-operational">
            Marked not operational by staff: only staff can start a usage.
          </p>
        )}
        {active && (
          <dl className="facts">
            <dt>User</dt>
            <dd>{active.user_name}</dd>
            {active.operator_id !== active.user_id && (
              <>
                <dt>Operated by</dt>
                <dd>{active.operator_name}</dd>
              </>
            )}
            <dt>Project</dt>
            <dd>{active.project_name}</dd>
            <dt>Since</dt>
            <dd>{formatDateTime(active.start)}</dd>
            {active.remote_work && (
              <>
                <dt>Remote work</dt>
                <dd>Yes</dd>
              </>
            )}
          </dl>
        )}
        {shutdown && (
          <dl className="facts">
            <dt>Reason</dt>
            <dd>{shutdown.reason || 'No reason given'}</dd>
            <dt>Since</dt>
            <dd>{formatDateTime(shutdown.since)}</dd>
          </dl>
        )}
      </div>
    </section>
  );
}
