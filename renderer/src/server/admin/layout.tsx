/** The frame every admin section shares: a list of records and the editor of the chosen one. */
import { useEffect, useId, useRef, useState } from 'react';
import type { ReactElement, ReactNode } from 'react';
import { focusLost } from '../../focusLost.js';

/** The record being edited: its id, 'new', or none. */
export type Selection = number | 'new' | null;

export interface SelectionState<T extends { id: number }> {
  selected: Selection;
  /**
   * The record being edited, when it is an existing one; as it was last seen when it has left
   * the list (deleted elsewhere), so that its editor, and what was typed in it, stays.
   */
  current: T | undefined;
  /** What the last save said, or that the record is gone; cleared when another is chosen. */
  notice: string | null;
  select: (next: Selection) => void;
  /** After a save: keep editing the saved record and say so. */
  saved: (record: T, message: string) => void;
}

/** Which record of `rows` a section edits, and what its last save said. */
export function useSelection<T extends { id: number }>(rows: T[]): SelectionState<T> {
  const [selected, setSelected] = useState<Selection>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // The record as last seen: gone from the list (another admin deleted it), its editor would
  // otherwise turn into an empty "New …" one, what was typed lost, and a Save would make one.
  const lastSeen = useRef<T | undefined>(undefined);
  const found = typeof selected === 'number' ? rows.find((r) => r.id === selected) : undefined;
  if (found !== undefined || typeof selected !== 'number') lastSeen.current = found;
  const gone =
    typeof selected === 'number' && found === undefined && lastSeen.current !== undefined;
  return {
    selected,
    current: found ?? (gone ? lastSeen.current : undefined),
    notice: gone
      ? 'Deleted elsewhere meanwhile: it can no longer be saved. Copy what you typed, then Close.'
      : notice,
    select(next) {
      setNotice(null);
      setSelected(next);
    },
    saved(record, message) {
      setSelected(record.id);
      setNotice(message);
    },
  };
}

export interface ListRow {
  id: number;
  label: string;
  cells: string[];
}

export function ListPanel({
  title,
  newLabel,
  onNew,
  headers,
  rows,
  selected,
  onSelect,
}: {
  title: string;
  newLabel: string;
  onNew: () => void;
  headers: string[];
  rows: ListRow[];
  selected: Selection;
  onSelect: (id: number) => void;
}): ReactElement {
  const id = useId();
  const panel = useRef<HTMLElement>(null);
  const newButton = useRef<HTMLButtonElement>(null);
  // The editor closed (Close, or the record gone): the focus it had goes back to the button
  // that opened it, not to the page, where a keyboard user would start over from the top.
  const before = useRef<Selection>(selected);
  useEffect(() => {
    const closed = before.current;
    before.current = selected;
    if (selected !== null || closed === null || !focusLost()) return;
    const opener =
      closed === 'new'
        ? newButton.current
        : panel.current?.querySelector<HTMLButtonElement>(`button[data-row="${closed}"]`);
    (opener ?? newButton.current)?.focus();
  }, [selected]);
  return (
    <section className="panel" aria-labelledby={`${id}-title`} ref={panel}>
      <div className="history-bar">
        <h2 id={`${id}-title`}>{title}</h2>
        <button type="button" ref={newButton} onClick={onNew}>
          {newLabel}
        </button>
      </div>
      {rows.length === 0 ? (
        <p className="hint">None yet.</p>
      ) : (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                {headers.map((h) => (
                  <th key={h} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id} aria-current={row.id === selected || undefined}>
                  <th scope="row">
                    <button
                      type="button"
                      className="link-button"
                      aria-label={`Edit ${row.label}`}
                      data-row={row.id}
                      onClick={() => onSelect(row.id)}
                    >
                      {row.label}
                    </button>
                  </th>
                  {row.cells.map((cell, i) => (
                    <td key={i}>{cell}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function EditorPanel({
  title,
  busy,
  onSave,
  onClose,
  saved,
  saveLabel = 'Save',
  children,
}: {
  title: string;
  busy: boolean;
  onSave: () => void;
  onClose: () => void;
  saved: string | null;
  saveLabel?: string;
  children: ReactNode;
}): ReactElement {
  const id = useId();
  const submit = useRef<HTMLButtonElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    // Made anew for the record just created (its first save): a keyboard user goes on at its
    // Save button, not from the top of the page where the old editor's going left the focus.
    if (saved) {
      if (focusLost()) submit.current?.focus();
      return;
    }
    // Opened (Edit, New): the editor takes the focus, and comes into view; it is drawn beside
    // or below the list, which may hold the page's height and more.
    heading.current?.focus();
    heading.current?.scrollIntoView?.({ block: 'nearest' });
  }, []);
  return (
    <form
      className="panel editor"
      noValidate
      aria-labelledby={`${id}-title`}
      onSubmit={(e) => {
        e.preventDefault();
        // Save is not disabled while saving (it would drop the focus): a second press waits.
        if (!busy) onSave();
      }}
    >
      <h2 id={`${id}-title`} ref={heading} tabIndex={-1}>
        {title}
      </h2>
      {children}
      {saved && (
        <p className="notice" role="status">
          {saved}
        </p>
      )}
      <div className="actions">
        {/* Not disabled while saving: a disabled button drops the focus to the page. The save
            itself is not sent twice (onSubmit above). */}
        <button ref={submit} type="submit" className="primary" aria-disabled={busy || undefined}>
          {busy ? 'Saving…' : saveLabel}
        </button>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
