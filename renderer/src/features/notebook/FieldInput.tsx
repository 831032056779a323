import type { ReactElement } from 'react';
import { listedUnit } from '../../../../shared/metadata/index.js';
import type { MetadataField } from '../../../../shared/metadata/index.js';
import { TrashIcon } from '../../components/TrashIcon.js';
import type { FieldMessage } from './problems.js';
import { fieldLabel } from './words.js';

interface FieldInputProps {
  field: MetadataField;
  /** Unique in the page: the control's id and the stem of its helpers' ids. */
  id: string;
  messages: FieldMessage[];
  onValue: (value: unknown) => void;
  onUnit: (unit: string) => void;
  onRemove: () => void;
}

function textOf(value: MetadataField['value']): string {
  if (Array.isArray(value)) return value[0] ?? '';
  return typeof value === 'boolean' ? '' : String(value);
}

/**
 * The listed unit the dropdown shows selected: the stored unit in the form units lists it (a
 * "µm" with the micro sign is the "μm" listed with the Greek mu), '' (no unit) when it is none of
 * them. The stored unit is left as written: only choosing another one changes it.
 */
function shownUnit(field: MetadataField): string {
  if (field.unit === undefined) return '';
  return listedUnit(field.units ?? [], field.unit) ?? '';
}

/** The browser input of the simple types; datetime-local keeps seconds when the value has them. */
const INPUT_TYPES = {
  date: 'date',
  'datetime-local': 'datetime-local',
  email: 'email',
  text: 'text',
  time: 'time',
  url: 'url',
} as const;

function Control({
  field,
  id,
  described,
  invalid,
  onValue,
  onUnit,
}: Omit<FieldInputProps, 'messages' | 'onRemove'> & {
  described: string | undefined;
  invalid: boolean;
}): ReactElement {
  const common = {
    'aria-describedby': described,
    'aria-invalid': invalid || undefined,
    'aria-required': field.required === true || undefined,
  };
  switch (field.type) {
    case 'checkbox':
      return (
        <label className="choice">
          <input
            id={id}
            type="checkbox"
            aria-labelledby={`${id}-label`}
            checked={field.value === true}
            onChange={(e) => onValue(e.target.checked)}
            {...common}
          />
          <span aria-hidden="true">{field.value === true ? 'Checked' : 'Not checked'}</span>
        </label>
      );
    case 'number':
      return (
        <div className="control-row">
          {/* Text, kept as typed: a number input would turn "2,75" into 275 and "1e" into
              nothing, unseen. What is no number is said at the field, and not saved. */}
          <input
            id={id}
            type="text"
            inputMode="decimal"
            autoComplete="off"
            value={textOf(field.value)}
            onChange={(e) => onValue(e.target.value)}
            {...common}
          />
          {field.units && field.units.length > 0 && (
            <select
              aria-label={`Unit of ${fieldLabel(field.name)}`}
              className="unit-select"
              value={shownUnit(field)}
              onChange={(e) => onUnit(e.target.value)}
            >
              <option value="">(no unit)</option>
              {field.units.map((unit) => (
                <option key={unit} value={unit}>
                  {unit}
                </option>
              ))}
            </select>
          )}
        </div>
      );
    case 'select': {
      const options = field.options ?? [];
      if (field.allow_multi_values === true) {
        const chosen = Array.isArray(field.value) ? field.value : [textOf(field.value)];
        return (
          <select
            id={id}
            multiple
            value={chosen}
            onChange={(e) => onValue([...e.target.selectedOptions].map((o) => o.value))}
            {...common}
          >
            {options.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        );
      }
      return (
        <select
          id={id}
          value={textOf(field.value)}
          onChange={(e) => onValue(e.target.value)}
          {...common}
        >
          <option value="">(none)</option>
          {options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      );
    }
    case 'radio':
      return (
        <div className="choices" role="radiogroup" aria-labelledby={`${id}-label`} {...common}>
          {(field.options ?? []).map((option, i) => (
            <label key={option} className="choice">
              <input
                id={i === 0 ? id : undefined}
                type="radio"
                name={id}
                value={option}
                checked={field.value === option}
                onChange={() => onValue(option)}
              />
              <span>{option}</span>
            </label>
          ))}
        </div>
      );
    default:
      return (
        <input
          id={id}
          type={INPUT_TYPES[field.type]}
          step={field.type === 'time' || field.type === 'datetime-local' ? 1 : undefined}
          value={textOf(field.value)}
          onChange={(e) => onValue(e.target.value)}
          {...common}
        />
      );
  }
}

/** Edit mode: one field's label, description, control, problems and trash control. */
export function FieldInput(props: FieldInputProps): ReactElement {
  const { field, id, messages, onRemove } = props;
  const errors = messages.filter((m) => m.severity === 'error');
  const described =
    [field.description ? `${id}-help` : '', messages.length ? `${id}-messages` : '']
      .filter(Boolean)
      .join(' ') || undefined;
  return (
    <div className={errors.length ? 'field notebook-field invalid' : 'field notebook-field'}>
      <div className="field-head">
        {field.type === 'radio' ? (
          <span id={`${id}-label`} className="field-label">
            {fieldLabel(field.name)}
          </span>
        ) : (
          <label htmlFor={id} id={`${id}-label`} className="field-label">
            {fieldLabel(field.name)}
          </label>
        )}
        {field.required === true && (
          <span className="required-mark" title="Required (does not block saving)">
            {' '}
            * <span className="visually-hidden">required</span>
          </span>
        )}
      </div>
      {field.description && (
        <p id={`${id}-help`} className="help">
          {field.description}
        </p>
      )}
      {/* The trash control follows the input, on the page and in the tab order. */}
      <div className="field-control">
        <Control {...props} described={described} invalid={errors.length > 0} />
        <button
          type="button"
          className="trash"
          aria-label={`Remove field ${fieldLabel(field.name)}`}
          title={`Remove field ${fieldLabel(field.name)}`}
          onClick={onRemove}
        >
          <TrashIcon />
        </button>
      </div>
      <ul id={`${id}-messages`} className="messages" aria-live="polite">
        {messages.map((m) => (
          <li key={m.text} className={m.severity === 'warning' ? 'warning' : undefined}>
            {m.text}
          </li>
        ))}
      </ul>
    </div>
  );
}
