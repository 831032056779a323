import { useId, useRef, useState } from 'react';
import type { ReactElement } from 'react';
import { isStaffRole, type UsageEventView } from '../../../shared/api.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { errorText, formatDateTime } from '../format.js';
import { focusLost } from '../focusLost.js';
import { serverCall } from './serverBridge.js';
import { useServerStore } from './store.js';

function stateOf(event: UsageEventView): string {
  if (event.end === null) return 'In use';
  if (event.post_usage_pending) return 'Questions pending';
  if (!event.validated) return 'Done';
  return event.validated_by_name ? `Validated by ${event.validated_by_name}` : 'Validated';
}

/**
 * The answers given at the station to a form answered here first, which were not kept: shown
 * for staff to settle, one line a question.
 */
function NotKept({ answers }: { answers: string }): ReactElement {
  let lines: string[];
  try {
    const parsed = JSON.parse(answers) as unknown;
    lines =
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? Object.entries(parsed).map(
            ([name, value]) =>
              `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
          )
        : [answers];
  } catch {
    lines = [answers];
  }
  return (
    <details className="not-kept">
      <summary>Answers given at the station too, not kept</summary>
      <ul>
        {lines.map((line, i) => (
          <li key={i}>{line}</li>
        ))}
      </ul>
    </details>
  );
}

/** What an empty list says, after the choices made. */
function emptyText(
  onlyToValidate: boolean,
  tool: { tools: { id: number; name: string }[]; id: number | null } | undefined,
): string {
  const name = tool?.id == null ? null : tool.tools.find((t) => t.id === tool.id)?.name;
  const of = name ? ` of ${name}` : '';
  return onlyToValidate ? `Nothing${of} is left to validate.` : `No usage${of} recorded yet.`;
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
  tool,
  older,
}: {
  events: UsageEventView[];
  title?: string;
  showUser?: boolean;
  /** A choice to show only the events left to validate, and whether it is made. */
  toValidate?: { only: boolean; choose(only: boolean): void };
  /** A choice of one tool's usage among `tools` (null: every tool's), and the one made. */
  tool?: {
    tools: { id: number; name: string }[];
    id: number | null;
    choose(id: number | null): void;
  };
  /** Whether the list goes on further back, and what adds its next page. */
  older?: { more: boolean; show(): Promise<void> };
}): ReactElement {
  const id = useId();
  const role = useServerStore((s) => s.account?.role);
  const failed = useServerStore((s) => s.failed);
  const took = useServerStore((s) => s.took);
  const canValidate = isStaffRole(role);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const olderButton = useRef<HTMLButtonElement>(null);

  const [readingOlder, setReadingOlder] = useState(false);
  /** Said once an older page came (a screen reader hears nothing else change). */
  const [olderSaid, setOlderSaid] = useState('');

  const showOlder = (): void => {
    if (!older || readingOlder) return;
    setReadingOlder(true);
    void older
      .show()
      .then(() => {
        setOlderSaid(`${useServerStore.getState().recent.length} usages shown.`);
        window.setTimeout(() => {
          // The last page came: the button went, with the focus on it. The focus goes to the
          // list's heading, from where the person reads on.
          if (olderButton.current === null && focusLost()) {
            heading.current?.focus();
          }
        }, 0);
      })
      .finally(() => setReadingOlder(false));
  };

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
      <h2 id={`${id}-title`} ref={heading} tabIndex={-1}>
        {title}
      </h2>
      {tool && (
        <div className="field">
          <label htmlFor={`${id}-tool`}>Tool</label>
          <select
            id={`${id}-tool`}
            value={tool.id === null ? '' : String(tool.id)}
            onChange={(e) => tool.choose(e.target.value === '' ? null : Number(e.target.value))}
          >
            <option value="">All tools</option>
            {tool.tools.map((t) => (
              <option key={t.id} value={String(t.id)}>
                {t.name}
              </option>
            ))}
          </select>
        </div>
      )}
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
        <p className="hint">{emptyText(toValidate?.only ?? false, tool)}</p>
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
                    {event.station_answers_not_kept !== undefined && (
                      <NotKept answers={event.station_answers_not_kept} />
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
      {older?.more && events.length > 0 && (
        <button
          type="button"
          className="secondary"
          ref={olderButton}
          aria-busy={readingOlder}
          // Not disabled: a disabled button loses the focus, and the person their place.
          aria-disabled={readingOlder}
          onClick={showOlder}
        >
          Older usage
        </button>
      )}
      {older && (
        <p className="visually-hidden" role="status">
          {olderSaid}
        </p>
      )}
    </section>
  );
}
