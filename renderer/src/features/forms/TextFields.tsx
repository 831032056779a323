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
          maxLength={question.maxlength}
          placeholder={question.placeholder}
          aria-required={question.required || undefined}
          aria-invalid={messages.length > 0 || undefined}
          aria-describedby={describedBy(
            question.prefix && `${id}-prefix`,
            question.suffix && `${id}-suffix`,
            question.help && `${id}-help`,
            messages.length > 0 && `${id}-messages`,
          )}
          onChange={(e) => form.setValue(path, e.target.value)}
          onBlur={() => form.touch(path)}
        />
        <Affix id={`${id}-suffix`} text={question.suffix} />
      </div>
      <LengthHint max={question.maxlength} length={value.length} />
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
        maxLength={question.maxlength}
        placeholder={question.placeholder}
        aria-required={question.required || undefined}
        aria-invalid={messages.length > 0 || undefined}
        aria-describedby={describedBy(
          question.help && `${id}-help`,
          messages.length > 0 && `${id}-messages`,
        )}
        onChange={(e) => form.setValue(path, e.target.value)}
        onBlur={() => form.touch(path)}
      />
      <LengthHint max={question.maxlength} length={value.length} />
    </FieldFrame>
  );
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
