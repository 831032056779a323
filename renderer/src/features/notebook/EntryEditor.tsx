import { Suspense, lazy } from 'react';
import type { ReactElement } from 'react';
import { displayMainText } from '../../../../shared/metadata/index.js';
import type { MetadataDoc } from '../../../../shared/metadata/index.js';
import type { NotebookEntryView } from '../../../../shared/notebookApi.js';
import { BuilderFields } from './BuilderFields.js';
import { ProblemList } from './ProblemList.js';
import { useEntryDraft } from './useEntryDraft.js';

// CodeMirror is loaded the first time code mode opens, keeping it out of the first page load.
const CodeEditor = lazy(() =>
  import('./CodeEditor.js').then((module) => ({ default: module.CodeEditor })),
);

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

  return (
    <div className="entry-editor">
      <div className="field">
        <label htmlFor="entry-title-input">Title</label>
        <input
          id="entry-title-input"
          type="text"
          value={draft.title}
          onChange={(e) => actions.setTitle(e.target.value)}
        />
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

      {draft.saveError && (
        <div className="error" role="alert" data-testid="save-error">
          <p>{draft.saveError.message}</p>
          {draft.saveError.conflict && (
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
