import type { ReactElement, ReactNode } from 'react';
import { CONDITION_LABELS, controlLabel } from './searchConditions.js';
import type { ConditionInput, ConditionKind, ConditionRow } from './searchConditions.js';

interface ConditionEditorProps {
  row: ConditionRow;
  number: number;
  problem: string | null;
  onChange: (row: ConditionRow) => void;
  onRemove: () => void;
}

function Input({
  id,
  label,
  children,
}: {
  id: string;
  label: string;
  children: ReactNode;
}): ReactElement {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
    </div>
  );
}

/** The id of a condition's control, by the row's key. */
export const conditionInputId = (key: number, input: ConditionInput): string =>
  `condition-${key}-${input}`;

/** The id of a condition's first control (its kind), by the row's key. */
export const conditionKindId = (key: number): string => conditionInputId(key, 'kind');

/** One metadata condition of the search panel, with the inputs its kind needs. */
export function ConditionEditor(props: ConditionEditorProps): ReactElement {
  const { row, number, problem, onChange, onRemove } = props;
  const id = `condition-${row.key}`;
  const set = (changes: Partial<ConditionRow>): void => onChange({ ...row, ...changes });
  const dateType = row.withTime ? 'datetime-local' : 'date';
  // The problem, when there is one, describes each of the condition's controls.
  const problemId = `${id}-problem`;
  const describedBy = problem ? problemId : undefined;
  const label = (input: ConditionInput): string => controlLabel(row.kind, input);
  return (
    <fieldset className="condition" aria-label={`Condition ${number}`}>
      <legend>Condition {number}</legend>
      <div className="filters">
        <Input id={conditionKindId(row.key)} label={label('kind')}>
          <select
            id={conditionKindId(row.key)}
            aria-describedby={describedBy}
            value={row.kind}
            onChange={(e) => set({ kind: e.target.value as ConditionKind })}
          >
            {(Object.keys(CONDITION_LABELS) as ConditionKind[]).map((kind) => (
              <option key={kind} value={kind}>
                {CONDITION_LABELS[kind]}
              </option>
            ))}
          </select>
        </Input>
        {row.kind !== 'anyFieldContains' && (
          <Input id={`${id}-field`} label={label('field')}>
            <input
              id={`${id}-field`}
              aria-describedby={describedBy}
              type="text"
              value={row.field}
              onChange={(e) => set({ field: e.target.value })}
            />
          </Input>
        )}
        {(row.kind === 'equals' || row.kind === 'contains' || row.kind === 'anyFieldContains') && (
          <Input id={`${id}-text`} label={label('text')}>
            <input
              id={`${id}-text`}
              aria-describedby={describedBy}
              type="text"
              value={row.text}
              onChange={(e) => set({ text: e.target.value })}
            />
          </Input>
        )}
        {row.kind === 'numberBetween' && (
          <>
            <Input id={`${id}-min`} label={label('min')}>
              <input
                id={`${id}-min`}
                aria-describedby={describedBy}
                type="text"
                inputMode="decimal"
                autoComplete="off"
                value={row.min}
                onChange={(e) => set({ min: e.target.value })}
              />
            </Input>
            <Input id={`${id}-max`} label={label('max')}>
              <input
                id={`${id}-max`}
                aria-describedby={describedBy}
                type="text"
                inputMode="decimal"
                autoComplete="off"
                value={row.max}
                onChange={(e) => set({ max: e.target.value })}
              />
            </Input>
            <Input id={`${id}-unit`} label={label('unit')}>
              <input
                id={`${id}-unit`}
                aria-describedby={describedBy}
                type="text"
                value={row.unit}
                onChange={(e) => set({ unit: e.target.value })}
              />
            </Input>
          </>
        )}
        {row.kind === 'dateBetween' && (
          <>
            <label className="choice">
              <input
                type="checkbox"
                aria-describedby={describedBy}
                checked={row.withTime}
                onChange={(e) => set({ withTime: e.target.checked, from: '', to: '' })}
              />
              <span>With time</span>
            </label>
            <Input id={`${id}-from`} label={label('from')}>
              <input
                id={`${id}-from`}
                aria-describedby={describedBy}
                type={dateType}
                value={row.from}
                onChange={(e) => set({ from: e.target.value })}
              />
            </Input>
            <Input id={`${id}-to`} label={label('to')}>
              <input
                id={`${id}-to`}
                aria-describedby={describedBy}
                type={dateType}
                value={row.to}
                onChange={(e) => set({ to: e.target.value })}
              />
            </Input>
          </>
        )}
        {row.kind === 'checkbox' && (
          <Input id={`${id}-checked`} label="State">
            <select
              id={`${id}-checked`}
              aria-describedby={describedBy}
              value={row.checked ? 'true' : 'false'}
              onChange={(e) => set({ checked: e.target.value === 'true' })}
            >
              <option value="true">Checked</option>
              <option value="false">Not checked</option>
            </select>
          </Input>
        )}
        <div className="actions">
          <button
            type="button"
            className="secondary"
            aria-label={`Remove condition ${number}`}
            onClick={onRemove}
          >
            Remove
          </button>
        </div>
      </div>
      {problem && (
        <p id={problemId} className="messages">
          {problem}
        </p>
      )}
    </fieldset>
  );
}
