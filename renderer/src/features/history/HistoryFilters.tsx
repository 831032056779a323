import { useRef, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import { Messages } from '../forms/FieldFrame.js';
import { useHistoryStore } from '../../stores/history.js';

type DateBound = 'from' | 'to';

/** A date bound's problem in words, naming it by its label, and where to mend it. */
interface BoundProblem {
  at: DateBound;
  message: string;
}

const LABELS: Record<DateBound, string> = { from: 'From', to: 'To' };
const inputId = (bound: DateBound): string => `history-${bound}`;

/**
 * What stops the date range from being a filter: a date typed in part (the browser gives it as
 * no date, which would be no bound), or To before From.
 */
function rangeProblem(
  form: HTMLFormElement,
  range: { from: string; to: string },
): BoundProblem | null {
  for (const at of ['from', 'to'] as const) {
    const input = form.elements.namedItem(inputId(at));
    if (input instanceof HTMLInputElement && input.validity.badInput) {
      return { at, message: `${LABELS[at]}: give the whole date` };
    }
  }
  if (range.from && range.to && range.to < range.from) {
    return { at: 'to', message: 'To: must not be before From' };
  }
  return null;
}

/**
 * Filter by user and by date range (whole days, station time). `ownOnly` (someone who is not
 * staff): the table is their own usage, so no user to pick, and the form says so.
 */
export function HistoryFilters({
  ownOnly,
  onApply,
}: {
  ownOnly: boolean;
  onApply: () => void;
}): ReactElement {
  const filters = useHistoryStore((s) => s.filters);
  const setFilters = useHistoryStore((s) => s.setFilters);
  const [problem, setProblem] = useState<BoundProblem | null>(null);
  const form = useRef<HTMLFormElement>(null);

  // The form says what is wrong itself (noValidate): the browser's bubble passes, and left
  // the table as it was, unfiltered, to be taken for the filtered one and exported.
  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    const found = form.current ? rangeProblem(form.current, filters) : null;
    setProblem(found);
    if (found) {
      useHistoryStore.getState().refuse();
      document.getElementById(inputId(found.at))?.focus();
      return;
    }
    onApply();
  };

  const setBound = (at: DateBound, value: string): void => {
    setProblem(null);
    setFilters({ [at]: value });
  };

  const dateField = (at: DateBound): ReactElement => {
    const id = inputId(at);
    const messages = problem?.at === at ? [problem.message] : [];
    return (
      <div className={messages.length ? 'field invalid' : 'field'}>
        <label htmlFor={id}>{LABELS[at]}</label>
        <input
          id={id}
          name={id}
          type="date"
          value={filters[at]}
          aria-invalid={messages.length > 0 || undefined}
          aria-describedby={messages.length ? `${id}-messages` : undefined}
          onChange={(e) => setBound(at, e.target.value)}
        />
        <Messages id={`${id}-messages`} messages={messages} />
      </div>
    );
  };

  return (
    <form
      ref={form}
      className="filters"
      role="search"
      aria-label="History filters"
      noValidate
      onSubmit={onSubmit}
    >
      {ownOnly ? (
        <p className="hint">Your own usage; staff see everyone&apos;s.</p>
      ) : (
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
      )}
      {dateField('from')}
      {dateField('to')}
      <div className="actions">
        <button type="submit" className="primary">
          Apply filters
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setProblem(null);
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
