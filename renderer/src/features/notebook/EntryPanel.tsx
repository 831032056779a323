import { useEffect, useMemo, useRef, useState } from 'react';
import type { ReactElement } from 'react';
import { parseMetadata } from '../../../../shared/metadata/index.js';
import type { MetadataDoc } from '../../../../shared/metadata/index.js';
import type { NotebookEntryView } from '../../../../shared/notebookApi.js';
import { useNotebookStore } from '../../stores/notebook.js';
import { useSessionStore } from '../../stores/session.js';
import { useStationStore } from '../../stores/station.js';
import { EntryEditor } from './EntryEditor.js';
import { EntryView } from './EntryView.js';
import { entryDraftPrefix, entryEditingKey } from './useEntryDraft.js';
import { dropDrafts, readDraft, writeDraft } from '../forms/drafts.js';

const EMPTY_DOC: MetadataDoc = { fields: [], unknown: [] };

/**
 * The stored metadata as a document. The core refuses structural problems on save, but keeps a
 * document saved by an older version that no longer reads as it is (store.ts storedDoc): then
 * `unreadable` holds its JSON and why, and the editor opens it as JSON instead of as an empty
 * document, whose save would have put nothing in its place.
 */
export function storedMetadata(entry: NotebookEntryView): {
  doc: MetadataDoc;
  unreadable: { text: string; problem: string } | null;
} {
  if (entry.metadata === null) return { doc: EMPTY_DOC, unreadable: null };
  const result = parseMetadata(entry.metadata);
  if (result.ok) return { doc: result.doc, unreadable: null };
  const problem = result.problems[0]?.message ?? 'it is not a metadata document';
  return { doc: EMPTY_DOC, unreadable: { text: JSON.stringify(entry.metadata, null, 2), problem } };
}

/** The open entry: view mode with its actions, or edit mode. */
export function EntryPanel({ entry }: { entry: NotebookEntryView }): ReactElement {
  // Editing goes on after a look at another tab (its draft is kept by useEntryDraft).
  const editingKey = entryEditingKey(entry.id);
  const [editing, setEditingState] = useState(() => readDraft<boolean>(editingKey) ?? false);
  const editButton = useRef<HTMLButtonElement>(null);
  // Edit goes away with the view, Save and Cancel with the editor: after a switch the focus
  // goes to the editor's first field or back to Edit, not to the page body.
  const switched = useRef(false);
  const setEditing = (on: boolean): void => {
    switched.current = true;
    setEditingState(on);
    if (on) writeDraft(editingKey, true);
    else dropDrafts(entryDraftPrefix(entry.id));
  };
  useEffect(() => {
    if (!switched.current) return;
    switched.current = false;
    if (editing) document.getElementById('entry-title-input')?.focus();
    else editButton.current?.focus();
  }, [editing]);
  // A copy Duplicate just opened (in a panel of its own, the button gone with the one before)
  // takes the focus to its title instead of leaving it to the page body.
  const copyShown = useNotebookStore((s) => s.copyShown);
  useEffect(() => {
    if (copyShown !== entry.id) return;
    useNotebookStore.setState({ copyShown: null });
    document.getElementById('entry-title')?.focus();
  }, [copyShown, entry.id]);
  const { doc, unreadable } = useMemo(() => storedMetadata(entry), [entry]);
  // The core links an experiment only to a usage its owner used or operated (or any, when the
  // owner is staff): offered only then, and said why not otherwise, rather than refused after.
  const active = useStationStore((s) => s.status?.active ?? null);
  const me = useSessionStore((s) => s.session?.user ?? null);
  const owner = entry.owner;
  const linkable =
    active !== null &&
    (owner === null ||
      active.user_id === owner.id ||
      active.operator_id === owner.id ||
      (owner.id === me?.id && me.is_staff));
  const notLinkable =
    active === null
      ? 'No usage of the tool is in progress'
      : `The usage in progress is not ${owner?.username ?? 'the owner'}'s: an experiment is linked to a usage its owner used or operated`;
  const { duplicate, attachUsage, openEntry } = useNotebookStore.getState();
  const making = useNotebookStore((s) => s.making);

  /** Closes the entry; the focus, which goes with the panel, goes to its row in the list. */
  const closeEntry = (): void => {
    const row = document.querySelector<HTMLElement>(
      `[aria-label="Entry list"] [data-entry-id="${entry.id}"]`,
    );
    (row ?? document.getElementById('entry-kind-filter'))?.focus();
    void openEntry(null);
  };

  return (
    <section
      className="panel entry-panel"
      aria-label={editing ? `Editing entry ${entry.title}` : `Entry ${entry.title}`}
    >
      {!editing && (
        // Hidden while editing: each of these would replace the entry under the draft.
        <div className="actions entry-actions">
          <button
            ref={editButton}
            type="button"
            className="primary"
            onClick={() => setEditing(true)}
          >
            Edit
          </button>
          <button
            type="button"
            className="secondary"
            disabled={making}
            onClick={() => void duplicate(entry.id)}
          >
            Duplicate
          </button>
          {entry.kind === 'experiment' && (
            <button
              type="button"
              className="secondary"
              disabled={!linkable}
              title={linkable ? undefined : notLinkable}
              onClick={() => void attachUsage(entry.id)}
            >
              Link to the current usage
            </button>
          )}
          <button type="button" className="secondary" onClick={closeEntry}>
            Close
          </button>
        </div>
      )}
      {editing ? (
        <EntryEditor
          key={`${entry.id}-${entry.version}`}
          entry={entry}
          doc={doc}
          storedText={unreadable?.text}
          onDone={() => setEditing(false)}
          onReload={() => {
            setEditing(false);
            void openEntry(entry.id);
          }}
        />
      ) : (
        <>
          {unreadable && (
            <p className="notice" role="status" data-testid="metadata-unreadable">
              {`The stored metadata no longer reads (${unreadable.problem}). It is kept as it is; Edit shows it as JSON to repair.`}
            </p>
          )}
          <EntryView entry={entry} doc={doc} />
        </>
      )}
    </section>
  );
}
