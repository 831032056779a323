import { Suspense, lazy, useEffect } from 'react';
import type { ReactElement } from 'react';
import { displayMainText } from '../../../../shared/metadata/index.js';
import type { MetadataDoc } from '../../../../shared/metadata/index.js';
import type { NotebookEntryView } from '../../../../shared/notebookApi.js';
import { Messages } from '../forms/FieldFrame.js';
import { BuilderFields, fieldControlId } from './BuilderFields.js';
import { ProblemList } from './ProblemList.js';
import { useEntryDraft } from './useEntryDraft.js';

// CodeMirror is loaded the first time code mode opens, keeping it out of the first page load.
const CodeEditor = lazy(() =>
  import('./CodeEditor.js').then((module) => ({ default: module.CodeEditor })),
);

const TITLE_ID = 'entry-title-input';

interface EntryEditorProps {
  entry: NotebookEntryView;
  doc: MetadataDoc;
  /** The stored metadata's JSON when it no longer reads (EntryPanel storedMetadata). */
  storedText?: string;
  onDone: () => void;
  onReload: () => void;
}

/** Edit mode: title, tags, main text and the metadata in the builder or as JSON; Save. */
export function EntryEditor({
  entry,
  doc: initialDoc,
  storedText,
  onDone,
  onReload,
}: EntryEditorProps): ReactElement {
  const draft = useEntryDraft(entry, initialDoc, storedText);
  const { actions, mode } = draft;
  const showText = displayMainText(draft.doc);
  const { saveError } = draft;
  const titleMessages = saveError?.at === 'title' ? [saveError.message] : [];

  // A save refused for a control sends the person there (drawn by now: it was on the page).
  useEffect(() => {
    const at = saveError?.at;
    if (at === undefined) return;
    const id = at === 'title' ? TITLE_ID : fieldControlId(draft.doc, at.field);
    if (id !== null) document.getElementById(id)?.focus();
    // Only a new refusal moves the focus, not each change of the document after it.
  }, [saveError]);

  return (
    <div className="entry-editor">
      <div className={titleMessages.length ? 'field invalid' : 'field'}>
        <label htmlFor={TITLE_ID}>Title</label>
        <input
          id={TITLE_ID}
          type="text"
          value={draft.title}
          aria-invalid={titleMessages.length > 0 || undefined}
          aria-describedby={titleMessages.length ? `${TITLE_ID}-messages` : undefined}
          onChange={(e) => actions.setTitle(e.target.value)}
        />
        <Messages id={`${TITLE_ID}-messages`} messages={titleMessages} />
      </div>
      <div className="field">
        <label htmlFor="entry-tags-input">Tags (separated by commas)</label>
        <input
          id="entry-tags-input"
          type="text"
          value={draft.tags}
          onChange={(e) => actions.setTags(e.target.value)}
        />
      </div>
      {mode === 'builder' && (
        <label className="choice">
          <input
            type="checkbox"
            checked={showText}
            onChange={(e) => actions.setDisplayMainText(e.target.checked)}
          />
          <span>Show the main text</span>
        </label>
      )}
      {showText && (
        <div className="field">
          <label htmlFor="entry-body-input">Main text</label>
          <textarea
            id="entry-body-input"
            rows={5}
            value={draft.body}
            onChange={(e) => actions.setBody(e.target.value)}
          />
        </div>
      )}

      <div className="mode-switch" role="group" aria-label="Metadata editor">
        <button
          type="button"
          aria-pressed={mode === 'builder'}
          onClick={() => {
            if (mode === 'code') actions.toBuilder();
          }}
        >
          Builder
        </button>
        <button
          type="button"
          aria-pressed={mode === 'code'}
          onClick={() => {
            if (mode === 'builder') actions.toCode();
          }}
        >
          Code (JSON)
        </button>
      </div>

      {mode === 'builder' ? (
        <BuilderFields draft={draft} />
      ) : (
        <div className="code-mode">
          {draft.blocked && (
            <div className="error" role="alert" data-testid="code-blocked">
              The JSON cannot go back to the builder or be saved until it is fixed:{' '}
              {draft.blocked[0]?.message ?? 'it is not a metadata document.'}
            </div>
          )}
          <Suspense fallback={<p className="hint">Loading the code editor…</p>}>
            <CodeEditor
              key={draft.codeRevision}
              initial={draft.code}
              onChange={actions.setCode}
              label="Metadata JSON"
            />
          </Suspense>
          <ProblemList problems={draft.codeProblems} label="Problems in the JSON" />
        </div>
      )}

      {saveError && saveError.at !== 'title' && (
        <div className="error" role="alert" data-testid="save-error">
          <p>{saveError.message}</p>
          {saveError.conflict && (
            <button type="button" className="secondary" onClick={onReload}>
              Reload the saved version
            </button>
          )}
        </div>
      )}
      <div className="actions entry-save">
        <button
          type="button"
          className="primary"
          disabled={draft.saving}
          onClick={() => {
            void actions.save().then((saved) => {
              if (saved) onDone();
            });
          }}
        >
          Save
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
    </div>
  );
}
