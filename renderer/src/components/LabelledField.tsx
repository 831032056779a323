import type { ReactElement, ReactNode } from 'react';
import { Messages } from '../features/forms/FieldFrame.js';

/**
 * A label, an optional hint, one control and its problems in words. The control points at the
 * hint and the problems with aria-describedby, using the ids `${id}-hint` and `${id}-messages`.
 */
export function LabelledField({
  id,
  label,
  hint,
  messages,
  children,
}: {
  id: string;
  label: string;
  hint?: string | undefined;
  messages: string[];
  children: ReactNode;
}): ReactElement {
  return (
    <div className={messages.length ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {hint && (
        <p id={`${id}-hint`} className="help">
          {hint}
        </p>
      )}
      {children}
      <Messages id={`${id}-messages`} messages={messages} />
    </div>
  );
}

export interface TextFieldProps {
  id: string;
  label: string;
  hint?: string | undefined;
  messages: string[];
  value: string;
  onChange: (value: string) => void;
  type?: 'text' | 'email' | 'password';
  autoComplete?: string;
  inputMode?: 'numeric' | 'url' | undefined;
}

/** A labelled text input with its hint and problems. */
export function TextField(props: TextFieldProps): ReactElement {
  const { id, hint, messages } = props;
  const described = [hint ? `${id}-hint` : '', messages.length ? `${id}-messages` : '']
    .filter(Boolean)
    .join(' ');
  return (
    <LabelledField id={id} label={props.label} hint={hint} messages={messages}>
      <input
        id={id}
        type={props.type ?? 'text'}
        autoComplete={props.autoComplete ?? 'off'}
        inputMode={props.inputMode}
        value={props.value}
        aria-invalid={messages.length > 0 || undefined}
        aria-describedby={described || undefined}
        onChange={(e) => props.onChange(e.target.value)}
      />
    </LabelledField>
  );
}
