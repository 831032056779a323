import { useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import { ENTRY_KINDS } from '../../../../shared/notebookApi.js';
import type { EntryKind } from '../../../../shared/notebookApi.js';
import { useNotebookStore } from '../../stores/notebook.js';
import { KIND_LABELS, templateKindFor } from './words.js';

/** New entry: its kind, title, and blank or from a template of the matching kind. */
export function NewEntryForm({ onCreated }: { onCreated: () => void }): ReactElement {
  const templates = useNotebookStore((s) => s.templates);
  const making = useNotebookStore((s) => s.making);
  const [kind, setKind] = useState<EntryKind>('experiment');
  const [title, setTitle] = useState('');
  const [template, setTemplate] = useState('');
  const templateKind = templateKindFor(kind);
  const choices = templates.filter((t) => t.kind === templateKind);

  const submit = (e: FormEvent): void => {
    e.preventDefault();
    if (title.trim() === '') return;
    const templateId = template === '' ? undefined : Number(template);
    void useNotebookStore
      .getState()
      .create({
        kind,
        title: title.trim(),
        ...(templateId !== undefined && choices.some((t) => t.id === templateId)
          ? { template_id: templateId }
          : {}),
      })
      .then((entry) => {
        if (!entry) return;
        setTitle('');
        setTemplate('');
        onCreated();
      });
  };

  return (
    <form className="new-entry" onSubmit={submit} aria-label="New entry">
      <h2>New entry</h2>
      <div className="field">
        <label htmlFor="new-entry-kind">Kind</label>
        <select
          id="new-entry-kind"
          value={kind}
          onChange={(e) => {
            setKind(e.target.value as EntryKind);
            setTemplate('');
          }}
        >
          {ENTRY_KINDS.map((k) => (
            <option key={k} value={k}>
              {KIND_LABELS[k]}
            </option>
          ))}
        </select>
      </div>
      {templateKind && (
        <div className="field">
          <label htmlFor="new-entry-template">Start from</label>
          <select
            id="new-entry-template"
            value={template}
            onChange={(e) => setTemplate(e.target.value)}
          >
            <option value="">Blank</option>
            {choices.map((t) => (
              <option key={t.id} value={String(t.id)}>
                {t.title}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="field">
        <label htmlFor="new-entry-title">Title</label>
        <input
          id="new-entry-title"
          type="text"
          value={title}
          onChange={(e) => setTitle(e.target.value)}
        />
      </div>
      <div className="actions">
        <button type="submit" className="primary" disabled={title.trim() === '' || making}>
          Create
        </button>
      </div>
    </form>
  );
}
