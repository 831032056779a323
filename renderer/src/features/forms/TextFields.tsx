import type { ReactElement } from 'react';
import type { TextareaQuestion, TextboxQuestion } from '../../../../shared/questions/index.js';
import { describedBy, FieldFrame } from './FieldFrame.js';
import { useForm } from './FormContext.js';
import type { Path } from './values.js';
import { characters, fitEdit } from './textLength.js';
import { asText, fieldId, valueAt } from './values.js';

interface FieldProps<Q> {
  question: Q;
  path: Path;
}

/** Text before or after a control (a unit, a currency); read out with the control. */
export function Affix({ id, text }: { id: string; text: string | undefined }): ReactElement | null {
  if (!text) return null;
  return (
    <span id={id} className="affix">
      {text}
    </span>
  );
}

export function TextboxField({ question, path }: FieldProps<TextboxQuestion>): ReactElement {
  const form = useForm();
  const id = fieldId(form.formId, path);
  const value = asText(valueAt(form.values, path));
  const messages = form.messagesAt(path);
  return (
    <FieldFrame question={question} controlId={id} messages={messages}>
      <div className="control-row">
        <Affix id={`${id}-prefix`} text={question.prefix} />
        <input
          id={id}
          type="text"
          value={value}
          placeholder={question.placeholder}
          aria-required={question.required || undefined}
          aria-invalid={messages.length > 0 || undefined}
          aria-describedby={describedBy(
            question.prefix && `${id}-prefix`,
            question.suffix && `${id}-suffix`,
            question.help && `${id}-help`,
            lengthShown(question.maxlength, value) && `${id}-length`,
            messages.length > 0 && `${id}-messages`,
          )}
          onChange={(e) => setWithin(form, path, e.target, value, question.maxlength)}
          onBlur={() => form.blurred(path)}
        />
        <Affix id={`${id}-suffix`} text={question.suffix} />
      </div>
      <LengthHint id={`${id}-length`} max={question.maxlength} value={value} />
    </FieldFrame>
  );
}

/** A box of `rows` lines; one that grows (auto_resize) as many as its text has, from there. */
export function shownRows(question: TextareaQuestion, value: string): number {
  const rows = question.rows ?? 2;
  return question.auto_resize ? Math.max(rows, value.split('\n').length) : rows;
}

export function TextareaField({ question, path }: FieldProps<TextareaQuestion>): ReactElement {
  const form = useForm();
  const id = fieldId(form.formId, path);
  const value = asText(valueAt(form.values, path));
  const messages = form.messagesAt(path);
  return (
    <FieldFrame question={question} controlId={id} messages={messages}>
      <textarea
        id={id}
        value={value}
        rows={shownRows(question, value)}
        placeholder={question.placeholder}
        aria-required={question.required || undefined}
        aria-invalid={messages.length > 0 || undefined}
        aria-describedby={describedBy(
          question.help && `${id}-help`,
          lengthShown(question.maxlength, value) && `${id}-length`,
          messages.length > 0 && `${id}-messages`,
        )}
        onChange={(e) => setWithin(form, path, e.target, value, question.maxlength)}
        onBlur={() => form.blurred(path)}
      />
      <LengthHint id={`${id}-length`} max={question.maxlength} value={value} />
    </FieldFrame>
  );
}

/**
 * Sets what was typed, cut to the limit as the check counts it (fitEdit), and puts the caret
 * back after what was kept: a controlled field would otherwise jump it to the end.
 */
function setWithin(
  form: ReturnType<typeof useForm>,
  path: Path,
  element: HTMLInputElement | HTMLTextAreaElement,
  previous: string,
  max: number | undefined,
): void {
  const fit = fitEdit(previous, element.value, max);
  form.setValue(path, fit.text);
  const caret = fit.caret;
  if (caret !== null) {
    window.requestAnimationFrame(() => element.setSelectionRange(caret, caret));
  }
}

/** The count shows from 80% of the limit on; the field is then described by it too. */
function lengthShown(max: number | undefined, value: string): boolean {
  return max !== undefined && characters(value) >= max * 0.8;
}

function LengthHint({
  id,
  max,
  value,
}: {
  id: string;
  max: number | undefined;
  value: string;
}): ReactElement | null {
  if (!lengthShown(max, value)) return null;
  return (
    <p id={id} className="hint">
      {characters(value)} of {max} characters
    </p>
  );
}
