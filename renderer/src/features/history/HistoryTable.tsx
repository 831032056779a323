import { useEffect, useState } from 'react';
import type { ReactElement } from 'react';
import type { UsageEventView } from '../../../../shared/api.js';
import type { HistoryTable as Table } from '../../../../shared/usage/history.js';
import { call } from '../../bridge.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { formatDateTime } from '../../format.js';
import { useHistoryStore } from '../../stores/history.js';
import { useToolAction } from '../tool-control/useToolAction.js';

interface HistoryTableProps {
  tool: string;
  table: Table;
  events: UsageEventView[];
  canValidate: boolean;
}

const START = 4;
const END = 5;
/**
 * Rows drawn at once, and more at each Show more: years of a busy tool are tens of thousands
 * (20,000 events with three samples took the tab 52 s to draw, the screen frozen). The CSV
 * export has every row.
 */
export const HISTORY_ROWS_AT_ONCE = 500;

/** One row per group repetition; times in the station's local time. */
export function HistoryTable({
  tool,
  table,
  events,
  canValidate,
}: HistoryTableProps): ReactElement {
  const replaceEvent = useHistoryStore((s) => s.replaceEvent);
  const [shown, setShown] = useState(HISTORY_ROWS_AT_ONCE);
  // Another table (filters applied, read again): from its start.
  useEffect(() => setShown(HISTORY_ROWS_AT_ONCE), [table]);
  const rows = table.rows.slice(0, shown);
  const action = useToolAction();
  const byId = new Map(events.map((e) => [String(e.id), e]));
  const validate = (event: UsageEventView): void =>
    void action.run(async () => {
      const { usage } = await call('toolControl.validate', { usage: event.id });
      replaceEvent(usage);
    });

  return (
    <>
      <ErrorMessage message={action.error} />
      <div className="table-scroll" tabIndex={0} role="region" aria-label="History table">
        <table>
          <caption className="visually-hidden">{`Usage data history of ${tool}`}</caption>
          <thead>
            <tr>
              {table.columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
              {canValidate && <th scope="col">actions</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, i) => {
              const event = byId.get(row[0] ?? '');
              const firstOfEvent = i === 0 || table.rows[i - 1]?.[0] !== row[0];
              return (
                <tr key={i} className={firstOfEvent ? 'event-start' : undefined}>
                  {row.map((cell, j) => (
                    <td key={j}>{j === START || j === END ? formatDateTime(cell) : cell}</td>
                  ))}
                  {canValidate && (
                    <td>
                      {firstOfEvent && event && (
                        <ValidateCell event={event} onValidate={validate} busy={action.busy} />
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {rows.length < table.rows.length && (
        <p className="actions">
          <span role="status">{`Showing ${rows.length} of ${table.rows.length} rows; the CSV export has them all.`}</span>{' '}
          <button
            type="button"
            className="secondary"
            onClick={() => setShown((n) => n + HISTORY_ROWS_AT_ONCE)}
          >
            Show more
          </button>
        </p>
      )}
    </>
  );
}

function ValidateCell({
  event,
  onValidate,
  busy,
}: {
  event: UsageEventView;
  onValidate: (event: UsageEventView) => void;
  busy: boolean;
}): ReactElement | null {
  if (event.validated) {
    return (
      <span>{`Validated${event.validated_by_name ? ` by ${event.validated_by_name}` : ''}`}</span>
    );
  }
  if (event.end === null) return <span>Active</span>;
  return (
    <button
      type="button"
      className="secondary small"
      disabled={busy}
      aria-label={`Validate usage event ${event.id}`}
      onClick={() => onValidate(event)}
    >
      Validate
    </button>
  );
}
