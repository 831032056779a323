import type { ReactElement } from 'react';
import { fixedText } from '../../../../shared/questions/decimal.js';
import type { FormulaQuestion } from '../../../../shared/questions/index.js';
import { describedBy, FieldFrame } from './FieldFrame.js';
import { useForm } from './FormContext.js';
import { Affix } from './TextFields.js';
import type { Path } from './values.js';
import { fieldId, valueAt } from './values.js';

/** A computed answer: read-only, recomputed as the answers it reads change. */
export function FormulaField({
  question,
  path,
}: {
  question: FormulaQuestion;
  path: Path;
}): ReactElement {
  const form = useForm();
  const id = fieldId(form.formId, path);
  const computed = valueAt(form.computed, path);
  const text =
    typeof computed === 'number'
      ? question.precision === undefined
        ? String(computed)
        : fixedText(computed, question.precision)
      : '';
  const messages = form.messagesAt(path);
  return (
    <FieldFrame question={question} controlId={id} messages={messages}>
      <div className="control-row">
        <input
          id={id}
          className="computed"
          type="text"
          readOnly
          value={text}
          placeholder="—"
          aria-describedby={describedBy(
            question.suffix && `${id}-suffix`,
            question.help && `${id}-help`,
            messages.length > 0 && `${id}-messages`,
          )}
        />
        <Affix id={`${id}-suffix`} text={question.suffix} />
      </div>
    </FieldFrame>
  );
}
