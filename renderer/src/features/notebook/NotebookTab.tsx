import { useEffect, useState } from 'react';
import type { ReactElement } from 'react';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { useNotebookStore } from '../../stores/notebook.js';
import { EntryList } from './EntryList.js';
import { EntryPanel } from './EntryPanel.js';
import { NewEntryForm } from './NewEntryForm.js';
import { SearchPanel } from './SearchPanel.js';

/** The Notebook tab: entries and templates with their metadata (spec 001), and search. */
export function NotebookTab(): ReactElement {
  const open = useNotebookStore((s) => s.open);
  const error = useNotebookStore((s) => s.error);
  const [searching, setSearching] = useState(false);

  useEffect(() => {
    void useNotebookStore.getState().refresh();
  }, []);

  return (
    <div className="notebook">
      <div className="history-bar">
        <ErrorMessage message={error} />
        <button
          type="button"
          className="secondary"
          aria-expanded={searching}
          aria-controls="notebook-search"
          onClick={() => setSearching(!searching)}
        >
          {searching ? 'Hide search' : 'Search entries'}
        </button>
      </div>
      {searching && (
        <div id="notebook-search">
          <SearchPanel />
        </div>
      )}
      <div className="control-layout">
        <div className="column">
          <section className="panel">
            <NewEntryForm onCreated={() => undefined} />
          </section>
          <div className="panel">
            <EntryList />
          </div>
        </div>
        <div className="column">
          {open ? (
            <EntryPanel key={open.id} entry={open} />
          ) : (
            <p className="hint">Open an entry from the list, or create one.</p>
          )}
        </div>
      </div>
    </div>
  );
}
