import { useEffect, useMemo } from 'react';
import type { ReactElement } from 'react';
import { historyRows } from '../../../../shared/usage/history.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { sameFilters, tableMatchesFilters, useHistoryStore } from '../../stores/history.js';
import { useSessionStore } from '../../stores/session.js';
import { downloadCsv } from './downloadCsv.js';
import { HistoryFilters } from './HistoryFilters.js';
import { HistoryTable } from './HistoryTable.js';

/**
 * The Usage Data History tab (spec 000): every answer of every usage of this tool for staff;
 * for anyone else their own usage only (the core refuses them anyone else's), which is all the
 * table and its CSV export then hold.
 */
export function HistoryTab({ tool }: { tool: string }): ReactElement {
  const load = useHistoryStore((s) => s.load);
  const info = useHistoryStore((s) => s.tool);
  const events = useHistoryStore((s) => s.events);
  const loading = useHistoryStore((s) => s.loading);
  const error = useHistoryStore((s) => s.error);
  const isStaff = useSessionStore((s) => s.session?.user.is_staff ?? false);
  const ownOnly = !isStaff;
  // Filters typed and not applied: the table and its export are still of those applied before.
  const notApplied = useHistoryStore((s) => !sameFilters(s.filters, s.applied, ownOnly));
  const exportable = useHistoryStore((s) => tableMatchesFilters(s, ownOnly));

  // Read again when the staff rights change too: the events of others go with them. Of the
  // filters applied: what is typed and not applied stays typed, and says so.
  useEffect(() => {
    void load(tool, { ownOnly, again: true });
  }, [load, tool, ownOnly]);

  const table = useMemo(() => (info ? historyRows(info, events) : null), [info, events]);
  const eventCount = events.length;

  return (
    <section className="panel history" aria-labelledby="history-title">
      <h2 id="history-title">Usage data history</h2>
      <HistoryFilters ownOnly={ownOnly} onApply={() => void load(tool, { ownOnly })} />
      <ErrorMessage message={error} />
      {notApplied && (
        <p className="hint" id="history-not-applied">
          The filters above are not applied yet: the table and its export are of the filters applied
          before. Press Apply filters.
        </p>
      )}
      <div className="history-bar">
        <p role="status">
          {loading
            ? 'Loading…'
            : `${eventCount} usage event${eventCount === 1 ? '' : 's'}, ${table?.rows.length ?? 0} row${
                table?.rows.length === 1 ? '' : 's'
              }`}
        </p>
        <button
          type="button"
          className="secondary"
          disabled={!table || table.rows.length === 0 || !exportable}
          aria-describedby={notApplied ? 'history-not-applied' : undefined}
          onClick={() => table && downloadCsv(tool, table)}
        >
          Export CSV
        </button>
      </div>
      {table && <HistoryTable tool={tool} table={table} events={events} canValidate={isStaff} />}
    </section>
  );
}
