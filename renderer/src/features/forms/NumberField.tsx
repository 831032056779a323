import { useState } from 'react';
import type { KeyboardEvent, ReactElement } from 'react';
import { fixedText } from '../../../../shared/questions/decimal.js';
import { nextOnStep } from '../../../../shared/questions/step.js';
import type { NumericInputQuestion } from '../../../../shared/questions/index.js';
import { questionLabel } from '../../../../shared/questions/index.js';
import { applyNumpadKey, Numpad } from '../../components/Numpad.js';
import { describedBy, FieldFrame } from './FieldFrame.js';
import { useForm } from './FormContext.js';
import { Affix } from './TextFields.js';
import type { Path } from './values.js';
import { asText, fieldId, valueAt } from './values.js';

interface NumberFieldProps {
  question: NumericInputQuestion;
  path: Path;
}

/** Decimal places the field takes: 0 for whole numbers, undefined for any number of them. */
function decimalsOf(question: NumericInputQuestion): number | undefined {
  if (question.type === 'number') return 0;
  return question.precision;
}

/** "from 0 to 10, up to 2 decimal places": the rules in words, next to the field. */
function rangeText(question: NumericInputQuestion): string {
  const parts: string[] = [];
  const { min, max } = question;
  if (min !== undefined && max !== undefined) parts.push(`from ${min} to ${max}`);
  else if (min !== undefined) parts.push(`at least ${min}`);
  else if (max !== undefined) parts.push(`at most ${max}`);
  if (question.step !== undefined) parts.push(`in steps of ${question.step}`);
  if (question.type === 'number') parts.push('whole number');
  else if (question.precision !== undefined) {
    parts.push(`up to ${question.precision} decimal place${question.precision === 1 ? '' : 's'}`);
  }
  return parts.length ? `${parts.join(', ')}`.replace(/^./, (c) => c.toUpperCase()) : '';
}

/**
 * A number typed as text (so "1." and "-" can be on their way to a number), with the step of
 * its precision on the arrow keys and an optional on-screen keypad.
 */
export function NumberField({ question, path }: NumberFieldProps): ReactElement {
  const form = useForm();
  const [keypad, setKeypad] = useState(false);
  const id = fieldId(form.formId, path);
  const value = asText(valueAt(form.values, path));
  const messages = form.messagesAt(path);
  const decimals = decimalsOf(question);
  const allowNegative = question.min === undefined || question.min < 0;
  const range = rangeText(question);

  // The step is the question's own (NEMO's step, on its grid: shared/questions/step.ts), else the last place
  // the precision allows; without a precision (a float taking any decimals), one, keeping the
  // decimals typed (2.5 -> 3.5).
  const step = (e: KeyboardEvent<HTMLInputElement>): void => {
    if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
    e.preventDefault();
    const current = Number(value);
    const typed = value.trim() === '' || Number.isNaN(current) ? null : current;
    let next: number;
    if (question.step !== undefined) {
      next = nextOnStep(typed, e.key === 'ArrowUp', { ...question, step: question.step });
    } else {
      const base = typed ?? question.min ?? 0;
      const delta = (e.key === 'ArrowUp' ? 1 : -1) * 10 ** -(decimals ?? 0);
      const moved = base + (typed === null ? 0 : delta);
      next =
        decimals === undefined ? Number(moved.toPrecision(15)) : Number(moved.toFixed(decimals));
      if (question.min !== undefined) next = Math.max(question.min, next);
      if (question.max !== undefined) next = Math.min(question.max, next);
    }
    form.setValue(path, decimals === undefined ? String(next) : fixedText(next, decimals));
  };

  return (
    <FieldFrame question={question} controlId={id} messages={messages}>
      <div className="control-row">
        <Affix id={`${id}-prefix`} text={question.prefix} />
        <input
          id={id}
          type="text"
          inputMode={decimals === 0 ? 'numeric' : 'decimal'}
          autoComplete="off"
          value={value}
          placeholder={question.placeholder}
          aria-required={question.required || undefined}
          aria-invalid={messages.length > 0 || undefined}
          aria-describedby={describedBy(
            question.prefix && `${id}-prefix`,
            question.suffix && `${id}-suffix`,
            range && `${id}-range`,
            question.help && `${id}-help`,
            messages.length > 0 && `${id}-messages`,
          )}
          onChange={(e) => form.setValue(path, e.target.value)}
          onKeyDown={step}
          onBlur={() => form.blurred(path)}
        />
        <Affix id={`${id}-suffix`} text={question.suffix} />
        <button
          type="button"
          className="keypad-toggle"
          aria-label={`Keypad for ${questionLabel(question)}`}
          aria-expanded={keypad}
          aria-controls={`${id}-keypad`}
          onClick={() => {
            if (keypad) form.touch(path);
            setKeypad(!keypad);
          }}
        >
          Keypad
        </button>
      </div>
      {range && (
        <p id={`${id}-range`} className="hint">
          {range}
        </p>
      )}
      <div id={`${id}-keypad`} hidden={!keypad}>
        {keypad && (
          <Numpad
            label={`Keypad for ${questionLabel(question)}`}
            decimal={decimals !== 0}
            negative={allowNegative}
            onKey={(k) => form.setValue(path, applyNumpadKey(value, k))}
          />
        )}
      </div>
    </FieldFrame>
  );
}
