import type { CSSProperties, ReactElement, ReactNode } from 'react';
import type { Question } from '../../../../shared/questions/index.js';
import { RequiredMark, Title } from './Title.js';

/** ids of the texts that describe a field's control (help, problems, units). */
export function describedBy(...ids: (string | false | null | undefined)[]): string | undefined {
  const list = ids.filter((id): id is string => typeof id === 'string' && id !== '');
  return list.length ? list.join(' ') : undefined;
}

export function widthStyle(question: Question): CSSProperties | undefined {
  const max = question['max-width'];
  return typeof max === 'number' && max > 0 ? { maxWidth: `${max}px` } : undefined;
}

export function Help({ id, question }: { id: string; question: Question }): ReactElement | null {
  if (!question.help) return null;
  return (
    <p id={id} className="help">
      {question.help}
    </p>
  );
}

export function Messages({ id, messages }: { id: string; messages: string[] }): ReactElement {
  // Always rendered (possibly empty) so aria-describedby can point at it.
  return (
    <ul id={id} className="messages" aria-live="polite">
      {messages.map((m) => (
        <li key={m}>{m}</li>
      ))}
    </ul>
  );
}

interface FieldFrameProps {
  question: Question;
  controlId: string;
  messages: string[];
  children: ReactNode;
}

/** A single-control field: label bound to the control, required mark, help, problems. */
export function FieldFrame({
  question,
  controlId,
  messages,
  children,
}: FieldFrameProps): ReactElement {
  return (
    <div className={messages.length ? 'field invalid' : 'field'} style={widthStyle(question)}>
      <label htmlFor={controlId}>
        <Title question={question} />
        <RequiredMark question={question} />
      </label>
      <Help id={`${controlId}-help`} question={question} />
      {children}
      <Messages id={`${controlId}-messages`} messages={messages} />
    </div>
  );
}

interface FieldSetFrameProps {
  question: Question;
  legendId: string;
  messages: string[];
  className?: string;
  /** radiogroup for single choice: it carries required and invalid for its radios. */
  role?: 'radiogroup';
  children: ReactNode;
}

/** A field of several controls (radio, checkbox): a fieldset named by its legend. */
export function FieldSetFrame(props: FieldSetFrameProps): ReactElement {
  const { question, legendId, messages, className, role, children } = props;
  const classes = ['field', 'choice-field', className, messages.length ? 'invalid' : null];
  return (
    <fieldset
      className={classes.filter(Boolean).join(' ')}
      style={widthStyle(question)}
      aria-describedby={describedBy(
        question.help && `${legendId}-help`,
        messages.length > 0 && `${legendId}-messages`,
      )}
      role={role}
      aria-labelledby={role ? legendId : undefined}
      aria-required={role && question.required ? true : undefined}
      aria-invalid={role && messages.length > 0 ? true : undefined}
    >
      <legend id={legendId}>
        <Title question={question} />
        <RequiredMark question={question} />
        {/* A checkbox group has no role that carries aria-required: its name says it. */}
        {!role && question.required && <span className="visually-hidden"> (required)</span>}
      </legend>
      <Help id={`${legendId}-help`} question={question} />
      {children}
      <Messages id={`${legendId}-messages`} messages={messages} />
    </fieldset>
  );
}
