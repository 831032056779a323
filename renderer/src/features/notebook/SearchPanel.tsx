import { useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import { ENTRY_KINDS } from '../../../../shared/notebookApi.js';
import type { EntryKind } from '../../../../shared/notebookApi.js';
import type { MetadataQuery } from '../../../../shared/metadata/index.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { useFocusAfterRender } from '../../components/useFocusAfterRender.js';
import { useNotebookStore } from '../../stores/notebook.js';
import { ConditionEditor, conditionInputId, conditionKindId } from './ConditionEditor.js';
import { EntryRows } from './EntryList.js';
import { newCondition, toQuery } from './searchConditions.js';
import type { ConditionProblem, ConditionRow } from './searchConditions.js';
import { KIND_PLURALS, parseTags } from './words.js';

/** Milliseconds in words: one decimal below 10 ms. */
function formatMs(ms: number): string {
  return ms < 10 ? ms.toFixed(1) : String(Math.round(ms));
}

const ADD_CONDITION_ID = 'search-add-condition';

/** Search by kind, title, tags and metadata conditions (spec 001 rule 4). */
export function SearchPanel(): ReactElement {
  const outcome = useNotebookStore((s) => s.search);
  const error = useNotebookStore((s) => s.searchError);
  const [kind, setKind] = useState<EntryKind | ''>('');
  const [title, setTitle] = useState('');
  const [tags, setTags] = useState('');
  const [rows, setRows] = useState<ConditionRow[]>([]);
  const [nextKey, setNextKey] = useState(1);
  const [problems, setProblems] = useState<Map<number, ConditionProblem>>(new Map());
  // A new condition takes the focus (it is where the person goes next); a removed one takes its
  // Remove button with it, so the focus goes to the next condition, else the one before, else
  // Add metadata condition. A refused Search sends it to the control of the first problem, once
  // drawn with the problem describing it. The id of what to focus once drawn, or null.
  const focusAfter = useFocusAfterRender(rows, problems);

  const removeRow = (key: number): void => {
    const at = rows.findIndex((r) => r.key === key);
    const next = rows[at + 1] ?? rows[at - 1];
    focusAfter(next ? conditionKindId(next.key) : ADD_CONDITION_ID);
    setRows(rows.filter((r) => r.key !== key));
  };

  const submit = (e: FormEvent): void => {
    e.preventDefault();
    const queries: MetadataQuery[] = [];
    const found = new Map<number, ConditionProblem>();
    for (const row of rows) {
      const result = toQuery(row);
      if ('query' in result) queries.push(result.query);
      else found.set(row.key, result);
    }
    setProblems(found);
    const [key, first] = found.entries().next().value ?? [];
    if (key !== undefined && first) {
      useNotebookStore.getState().clearSearch();
      // The control, else (not drawn for this kind) the condition's first control.
      const target = conditionInputId(key, first.input);
      focusAfter(document.getElementById(target) ? target : conditionKindId(key));
      return;
    }
    const tagList = parseTags(tags);
    void useNotebookStore.getState().runSearch({
      ...(kind ? { kind } : {}),
      ...(title.trim() ? { title: title.trim() } : {}),
      ...(tagList.length ? { tags: tagList } : {}),
      ...(queries.length ? { metadata: queries } : {}),
    });
  };

  return (
    <section className="panel search-panel" aria-label="Search entries">
      <h2>Search</h2>
      {/* The bounds are checked here, in words naming them (searchConditions.ts), not by the
          browser's own passing bubble; they are text so that "2,5" reaches that check. */}
      <form noValidate onSubmit={submit}>
        <div className="filters">
          <div className="field">
            <label htmlFor="search-kind">Kind</label>
            <select
              id="search-kind"
              value={kind}
              onChange={(e) => setKind(e.target.value as EntryKind | '')}
            >
              <option value="">Every kind</option>
              {ENTRY_KINDS.map((k) => (
                <option key={k} value={k}>
                  {KIND_PLURALS[k]}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="search-title">Title contains</label>
            <input
              id="search-title"
              type="text"
              value={title}
              onChange={(e) => setTitle(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="search-tags">Tags (all of, separated by commas)</label>
            <input
              id="search-tags"
              type="text"
              value={tags}
              onChange={(e) => setTags(e.target.value)}
            />
          </div>
        </div>
        {rows.map((row, i) => (
          <ConditionEditor
            key={row.key}
            row={row}
            number={i + 1}
            problem={problems.get(row.key)?.problem ?? null}
            onChange={(changed) => setRows(rows.map((r) => (r.key === row.key ? changed : r)))}
            onRemove={() => removeRow(row.key)}
          />
        ))}
        <div className="actions">
          <button
            id={ADD_CONDITION_ID}
            type="button"
            className="secondary"
            onClick={() => {
              focusAfter(conditionKindId(nextKey));
              setRows([...rows, newCondition(nextKey)]);
              setNextKey(nextKey + 1);
            }}
          >
            Add metadata condition
          </button>
          <button type="submit" className="primary">
            Search
          </button>
        </div>
      </form>
      <ErrorMessage message={error} />
      {outcome && (
        <div className="search-results">
          <p role="status" data-testid="search-summary">
            {outcome.total} {outcome.total === 1 ? 'entry' : 'entries'} found in{' '}
            {formatMs(outcome.took_ms)} ms
          </p>
          <EntryRows entries={outcome.entries} label="Search results" />
          {outcome.entries.length < outcome.total && (
            <div className="actions">
              <button
                type="button"
                className="secondary"
                onClick={() => void useNotebookStore.getState().searchMore()}
              >
                Show more ({outcome.total - outcome.entries.length} not shown)
              </button>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
