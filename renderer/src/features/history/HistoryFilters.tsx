import type { FormEvent, ReactElement } from 'react';
import { useHistoryStore } from '../../stores/history.js';

/** Filter by user and by date range (whole days, station time). */
export function HistoryFilters({ onApply }: { onApply: () => void }): ReactElement {
  const filters = useHistoryStore((s) => s.filters);
  const setFilters = useHistoryStore((s) => s.setFilters);
  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    onApply();
  };
  return (
    <form className="filters" role="search" aria-label="History filters" onSubmit={onSubmit}>
      <div className="field">
        <label htmlFor="history-user">User</label>
        <input
          id="history-user"
          value={filters.user}
          placeholder="username"
          autoCapitalize="none"
          spellCheck={false}
          onChange={(e) => setFilters({ user: e.target.value })}
        />
      </div>
      <div className="field">
        <label htmlFor="history-from">From</label>
        <input
          id="history-from"
          type="date"
          value={filters.from}
          max={filters.to || undefined}
          onChange={(e) => setFilters({ from: e.target.value })}
        />
      </div>
      <div className="field">
        <label htmlFor="history-to">To</label>
        <input
          id="history-to"
          type="date"
          value={filters.to}
          min={filters.from || undefined}
          onChange={(e) => setFilters({ to: e.target.value })}
        />
      </div>
      <div className="actions">
        <button type="submit" className="primary">
          Apply filters
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setFilters({ user: '', from: '', to: '' });
            onApply();
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}
