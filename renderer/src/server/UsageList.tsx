import { useId, useState } from 'react';
import type { ReactElement } from 'react';
import { isStaffRole, type UsageEventView } from '../../../shared/api.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { errorText, formatDateTime } from '../format.js';
import { serverCall } from './serverBridge.js';
import { useServerStore } from './store.js';

function stateOf(event: UsageEventView): string {
  if (event.end === null) return 'In use';
  if (event.post_usage_pending) return 'Questions pending';
  if (!event.validated) return 'Done';
  return event.validated_by_name ? `Validated by ${event.validated_by_name}` : 'Validated';
}

/**
 * Usage events, newest first: the person's own, or (for staff and admins) everyone's, with who
 * used the tool. Staff and admins validate an ended event here as at the station; the server
 * sends the validation to the station that recorded it.
 */
export function UsageList({
  events,
  title = 'My recent usage',
  showUser = false,
  toValidate,
}: {
  events: UsageEventView[];
  title?: string;
  showUser?: boolean;
  /** A choice to show only the events left to validate, and whether it is made. */
  toValidate?: { only: boolean; choose(only: boolean): void };
}): ReactElement {
  const id = useId();
  const role = useServerStore((s) => s.account?.role);
  const failed = useServerStore((s) => s.failed);
  const took = useServerStore((s) => s.took);
  const canValidate = isStaffRole(role);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const validate = (event: UsageEventView): void => {
    if (busy) return;
    setBusy(event.uuid);
    setError(null);
    serverCall('usage.validateServer', { usage: event.uuid })
      .then(({ usage }) => took(usage))
      .catch((err: unknown) => {
        const bridgeError = failed(err);
        if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
      })
      .finally(() => setBusy(null));
  };

  return (
    <section className="panel usage-list" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {toValidate && (
        <label className="choice">
          <input
            type="checkbox"
            checked={toValidate.only}
            onChange={(e) => toValidate.choose(e.target.checked)}
          />
          Only those left to validate
        </label>
      )}
      <ErrorMessage message={error} />
      {events.length === 0 ? (
        <p className="hint">
          {toValidate?.only ? 'Nothing is left to validate.' : 'No usage recorded yet.'}
        </p>
      ) : (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                {showUser && <th scope="col">User</th>}
                <th scope="col">Tool</th>
                <th scope="col">Project</th>
                <th scope="col">Start</th>
                <th scope="col">End</th>
                <th scope="col">State</th>
                {canValidate && (
                  <th scope="col">
                    <span className="visually-hidden">Validation</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.uuid}>
                  {showUser && <td>{event.user_name}</td>}
                  <td>{event.tool_name}</td>
                  <td>{event.project_name}</td>
                  <td>{formatDateTime(event.start)}</td>
                  <td>{formatDateTime(event.end)}</td>
                  <td>
                    {event.post_usage_pending ? (
                      <a href={`#/pending/${event.uuid}`}>{stateOf(event)}</a>
                    ) : (
                      stateOf(event)
                    )}
                  </td>
                  {canValidate && (
                    <td>
                      {event.end !== null && !event.validated && (
                        <button
                          type="button"
                          className="secondary small"
                          disabled={busy !== null}
                          aria-label={`Validate the usage of ${event.tool_name} from ${formatDateTime(event.start)}`}
                          onClick={() => validate(event)}
                        >
                          Validate
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
