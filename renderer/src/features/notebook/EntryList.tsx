import type { ReactElement } from 'react';
import { ENTRY_KINDS } from '../../../../shared/notebookApi.js';
import type { EntryKind, NotebookEntrySummary } from '../../../../shared/notebookApi.js';
import { formatDateTime } from '../../format.js';
import { useNotebookStore } from '../../stores/notebook.js';
import { KIND_LABELS, KIND_PLURALS } from './words.js';

/** Entries as buttons that open them, newest change first. */
export function EntryRows({
  entries,
  label,
}: {
  entries: NotebookEntrySummary[];
  label: string;
}): ReactElement {
  const openId = useNotebookStore((s) => s.open?.id ?? null);
  const openEntry = useNotebookStore((s) => s.openEntry);
  if (entries.length === 0) return <p className="hint">No entries.</p>;
  return (
    <ul className="entry-list" aria-label={label}>
      {entries.map((entry) => (
        <li key={entry.id}>
          <button
            type="button"
            className="entry-row"
            data-entry-id={entry.id}
            aria-current={entry.id === openId || undefined}
            onClick={() => void openEntry(entry.id)}
          >
            <strong>{entry.title}</strong>
            <small>
              {KIND_LABELS[entry.kind]} · {entry.field_count} field
              {entry.field_count === 1 ? '' : 's'} · {formatDateTime(entry.updated_at)}
            </small>
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The list with its kind filter. */
export function EntryList(): ReactElement {
  const kind = useNotebookStore((s) => s.kind);
  const entries = useNotebookStore((s) => s.entries);
  const more = useNotebookStore((s) => s.more);
  const setKind = useNotebookStore((s) => s.setKind);
  const loadMore = useNotebookStore((s) => s.loadMore);
  return (
    <section aria-label="Entries" className="entries">
      <h2>Entries</h2>
      <div className="field">
        <label htmlFor="entry-kind-filter">Show</label>
        <select
          id="entry-kind-filter"
          value={kind ?? ''}
          onChange={(e) =>
            void setKind(e.target.value === '' ? null : (e.target.value as EntryKind))
          }
        >
          <option value="">Every kind</option>
          {ENTRY_KINDS.map((k) => (
            <option key={k} value={k}>
              {KIND_PLURALS[k]}
            </option>
          ))}
        </select>
      </div>
      <EntryRows entries={entries} label="Entry list" />
      {more && (
        <button type="button" className="secondary" onClick={() => void loadMore()}>
          Older entries
        </button>
      )}
    </section>
  );
}
