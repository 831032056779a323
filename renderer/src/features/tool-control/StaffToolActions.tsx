import { useState } from 'react';
import type { ReactElement } from 'react';
import type { ToolStatus } from '../../../../shared/api.js';
import { call } from '../../bridge.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { formatDateTime } from '../../format.js';
import { useStationStore } from '../../stores/station.js';
import { useToolAction } from './useToolAction.js';

interface StaffToolActionsProps {
  status: ToolStatus;
  onDone: (message: string) => void;
}

/** Staff: force-end another person's usage (after a confirmation), clear a shutdown. */
export function StaffToolActions({ status, onDone }: StaffToolActionsProps): ReactElement | null {
  const showStatus = useStationStore((s) => s.showStatus);
  const action = useToolAction();
  const [confirming, setConfirming] = useState(false);
  const tool = status.tool.name;
  const active = status.active;

  const forceEnd = (): void =>
    void action.run(async () => {
      const { usage } = await call('toolControl.forceEnd', { tool });
      setConfirming(false);
      await showStatus(() => call('toolControl.status', { tool }));
      // A tool without post-usage questions leaves nothing to answer.
      onDone(
        usage.post_usage_pending
          ? `The usage of ${tool} was ended. ${usage.user_name} will be asked for the post-usage answers at their next log-on.`
          : `The usage of ${tool} was ended.`,
      );
    });

  const clearShutdown = (): void =>
    void action.run(async () => {
      await showStatus(() => call('toolControl.clearShutdown', { tool }));
      onDone(`${tool} is back in service.`);
    });

  if (status.state === 'idle') return null;
  return (
    <section className="panel staff" aria-labelledby="staff-actions-title">
      <h2 id="staff-actions-title">Staff actions</h2>
      {status.state === 'in_use' && (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Force end usage
        </button>
      )}
      {status.state === 'shutdown' && (
        <button type="button" className="primary" onClick={clearShutdown} disabled={action.busy}>
          Clear shutdown
        </button>
      )}
      <ErrorMessage message={confirming ? null : action.error} />
      <ConfirmDialog
        open={confirming}
        title="Force end this usage?"
        confirmLabel="Force end"
        busy={action.busy}
        onConfirm={forceEnd}
        onCancel={() => setConfirming(false)}
      >
        <p>
          {active
            ? `${active.user_name} has been using ${tool} since ${formatDateTime(active.start)}.`
            : `${tool} is in use.`}{' '}
          {status.tool.post_usage_questions.length
            ? 'The usage ends now; the post-usage questions stay pending until they answer them.'
            : 'The usage ends now.'}
        </p>
        <ErrorMessage message={action.error} />
      </ConfirmDialog>
    </section>
  );
}
