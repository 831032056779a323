import type { ReactElement } from 'react';
import type { TextareaQuestion, TextboxQuestion } from '../../../../shared/questions/index.js';
import { describedBy, FieldFrame } from './FieldFrame.js';
import { useForm } from './FormContext.js';
import type { Path } from './values.js';
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
            messages.length > 0 && `${id}-messages`,
          )}
          onChange={(e) => form.setValue(path, withinLength(e.target.value, question.maxlength))}
          onBlur={() => form.touch(path)}
        />
        <Affix id={`${id}-suffix`} text={question.suffix} />
      </div>
      <LengthHint max={question.maxlength} length={characters(value)} />
    </FieldFrame>
  );
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
        rows={question.rows ?? 2}
        placeholder={question.placeholder}
        aria-required={question.required || undefined}
        aria-invalid={messages.length > 0 || undefined}
        aria-describedby={describedBy(
          question.help && `${id}-help`,
          messages.length > 0 && `${id}-messages`,
        )}
        onChange={(e) => form.setValue(path, withinLength(e.target.value, question.maxlength))}
        onBlur={() => form.touch(path)}
      />
      <LengthHint max={question.maxlength} length={characters(value)} />
    </FieldFrame>
  );
}

/**
 * Characters as the answer check counts them (code points: an emoji is one), where the
 * browser's maxLength counts UTF-16 units (an emoji is two) and would stop at half the limit.
 */
function characters(text: string): number {
  return [...text].length;
}

/** `text` cut to `max` characters, as maxLength would, counted as the check counts them. */
function withinLength(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text;
  const chars = [...text];
  return chars.length <= max ? text : chars.slice(0, max).join('');
}

function LengthHint({
  max,
  length,
}: {
  max: number | undefined;
  length: number;
}): ReactElement | null {
  if (max === undefined || length < max * 0.8) return null;
  return (
    <p className="hint">
      {length} of {max} characters
    </p>
  );
}
