/** Labelled inputs of the admin editors, each showing its field's problems in words. */
import type { ReactElement } from 'react';
import { LabelledField, TextField } from '../../components/LabelledField.js';
import { describedBy, Messages } from '../../features/forms/FieldFrame.js';
import type { AdminForm } from './useAdminForm.js';

type StringKeys<T> = { [K in keyof T]: T[K] extends string ? K : never }[keyof T] & string;
type BooleanKeys<T> = { [K in keyof T]: T[K] extends boolean ? K : never }[keyof T] & string;
type IdListKeys<T> = { [K in keyof T]: T[K] extends number[] ? K : never }[keyof T] & string;

export function TextInput<T extends object>({
  form,
  field,
  label,
  hint,
  type = 'text',
  autoComplete = 'off',
  inputMode,
}: {
  form: AdminForm<T>;
  field: StringKeys<T>;
  label: string;
  hint?: string;
  type?: 'text' | 'email' | 'password';
  autoComplete?: string;
  inputMode?: 'numeric';
}): ReactElement {
  return (
    <TextField
      id={form.fieldId(field)}
      label={label}
      hint={hint}
      messages={form.errors[field] ?? []}
      value={form.values[field] as string}
      type={type}
      autoComplete={autoComplete}
      inputMode={inputMode}
      onChange={(value) => form.set(field, value as T[typeof field])}
    />
  );
}

export function SelectInput<T extends object>({
  form,
  field,
  label,
  options,
}: {
  form: AdminForm<T>;
  field: StringKeys<T>;
  label: string;
  options: { value: string; label: string }[];
}): ReactElement {
  const id = form.fieldId(field);
  const messages = form.errors[field] ?? [];
  return (
    <LabelledField id={id} label={label} messages={messages}>
      <select
        id={id}
        value={form.values[field] as string}
        aria-invalid={messages.length > 0 || undefined}
        aria-describedby={describedBy(messages.length > 0 && `${id}-messages`)}
        onChange={(e) => form.set(field, e.target.value as T[typeof field])}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </LabelledField>
  );
}

export function Toggle<T extends object>({
  form,
  field,
  label,
}: {
  form: AdminForm<T>;
  field: BooleanKeys<T>;
  label: string;
}): ReactElement {
  const id = form.fieldId(field);
  const messages = form.errors[field] ?? [];
  return (
    <div className={messages.length ? 'field invalid' : 'field'}>
      <label className="choice" htmlFor={id}>
        <input
          id={id}
          type="checkbox"
          checked={form.values[field] as boolean}
          aria-describedby={describedBy(messages.length > 0 && `${id}-messages`)}
          onChange={(e) => form.set(field, e.target.checked as T[typeof field])}
        />
        {label}
      </label>
      <Messages id={`${id}-messages`} messages={messages} />
    </div>
  );
}

/** A set of ids picked from a list (projects of a person, people qualified on a tool, ...). */
export function IdChecklist<T extends object>({
  form,
  field,
  label,
  options,
  empty,
}: {
  form: AdminForm<T>;
  field: IdListKeys<T>;
  label: string;
  options: { id: number; label: string }[];
  empty: string;
}): ReactElement {
  const id = form.fieldId(field);
  const messages = form.errors[field] ?? [];
  const chosen = new Set(form.values[field] as number[]);
  const toggle = (value: number, on: boolean): void => {
    const next = new Set(chosen);
    if (on) next.add(value);
    else next.delete(value);
    form.set(field, [...next].sort((a, b) => a - b) as T[typeof field]);
  };
  return (
    <fieldset
      id={id}
      tabIndex={-1}
      className={messages.length ? 'field checklist invalid' : 'field checklist'}
      aria-describedby={describedBy(messages.length > 0 && `${id}-messages`)}
    >
      <legend>{label}</legend>
      {options.length === 0 && <p className="hint">{empty}</p>}
      <div className="choices">
        {options.map((o) => (
          <label key={o.id} className="choice">
            <input
              type="checkbox"
              checked={chosen.has(o.id)}
              onChange={(e) => toggle(o.id, e.target.checked)}
            />
            {o.label}
          </label>
        ))}
      </div>
      <Messages id={`${id}-messages`} messages={messages} />
    </fieldset>
  );
}
