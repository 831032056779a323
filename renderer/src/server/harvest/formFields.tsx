/**
 * Labelled controls of the harvest editors. Each is found by the path of its field
 * (`watch.0.include`), so a problem the server names there is shown beside it.
 */
import type { ReactElement } from 'react';
import { LabelledField } from '../../components/LabelledField.js';
import { describedBy, Messages } from '../../features/forms/FieldFrame.js';
import type { ResourceForm } from './useResourceForm.js';

/** What a control needs of its form: its id, and the problems at its field. */
export type FieldHost = Pick<ResourceForm<object>, 'id' | 'messages'>;

interface FieldProps {
  form: FieldHost;
  path: string;
  label: string;
  hint?: string | undefined;
}

function described(form: FieldHost, path: string, hint: string | undefined): string | undefined {
  const id = form.id(path);
  return describedBy(hint && `${id}-hint`, form.messages(path).length > 0 && `${id}-messages`);
}

export function TextControl({
  form,
  path,
  label,
  hint,
  value,
  onChange,
  rows,
  code,
  list,
}: FieldProps & {
  value: string;
  onChange: (value: string) => void;
  /** A textarea of this many rows instead of one line. */
  rows?: number;
  /** Monospace: paths, globs, cron, JSON. */
  code?: boolean;
  /** The id of a <datalist> with suggestions. */
  list?: string;
}): ReactElement {
  const id = form.id(path);
  const messages = form.messages(path);
  const common = {
    id,
    value,
    className: code ? 'code' : undefined,
    'aria-invalid': messages.length > 0 || undefined,
    'aria-describedby': described(form, path, hint),
  };
  return (
    <LabelledField id={id} label={label} hint={hint} messages={messages}>
      {rows ? (
        <textarea {...common} rows={rows} onChange={(e) => onChange(e.target.value)} />
      ) : (
        <input
          {...common}
          type="text"
          autoComplete="off"
          list={list}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </LabelledField>
  );
}

export function SelectControl({
  form,
  path,
  label,
  hint,
  value,
  onChange,
  options,
}: FieldProps & {
  value: string;
  onChange: (value: string) => void;
  options: { value: string; label: string }[];
}): ReactElement {
  const id = form.id(path);
  const messages = form.messages(path);
  return (
    <LabelledField id={id} label={label} hint={hint} messages={messages}>
      <select
        id={id}
        value={value}
        aria-invalid={messages.length > 0 || undefined}
        aria-describedby={described(form, path, hint)}
        onChange={(e) => onChange(e.target.value)}
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

export function CheckControl({
  form,
  path,
  label,
  checked,
  onChange,
}: Omit<FieldProps, 'hint'> & {
  checked: boolean;
  onChange: (checked: boolean) => void;
}): ReactElement {
  const id = form.id(path);
  const messages = form.messages(path);
  return (
    <div className={messages.length ? 'field invalid' : 'field'}>
      <label className="choice" htmlFor={id}>
        <input
          id={id}
          type="checkbox"
          checked={checked}
          aria-describedby={described(form, path, undefined)}
          onChange={(e) => onChange(e.target.checked)}
        />
        {label}
      </label>
      <Messages id={`${id}-messages`} messages={messages} />
    </div>
  );
}

/** A select's value for an optional id: '' is none. */
export const idText = (id: number | null | undefined): string => (id ? String(id) : '');

/** The id a select holds, or null for none. */
export const idOrNull = (text: string): number | null => (text === '' ? null : Number(text));

/** A number typed in a text box, or the text itself so the schema names what is wrong. */
export function numberOrText(text: string): number | string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : trimmed;
}

/** One entry per non-empty line. */
export const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
