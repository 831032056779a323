import type { ReactElement } from 'react';
import type {
  CheckboxQuestion,
  DropdownQuestion,
  RadioQuestion,
  RadioReportProblemQuestion,
} from '../../../../shared/questions/index.js';
import { describedBy, FieldFrame, FieldSetFrame } from './FieldFrame.js';
import { useForm } from './FormContext.js';
import type { Path } from './values.js';
import { asList, asText, fieldId, valueAt } from './values.js';

interface FieldProps<Q> {
  question: Q;
  path: Path;
}

const REPORT_CHOICES = ['Yes', 'No'];

function optionsOf(
  choices: string[],
  labels: string[] | undefined,
): { value: string; label: string }[] {
  return choices.map((value, i) => ({ value, label: labels?.[i] ?? value }));
}

export function RadioField({
  question,
  path,
}: FieldProps<RadioQuestion | RadioReportProblemQuestion>): ReactElement {
  const form = useForm();
  const id = fieldId(form.formId, path);
  const value = asText(valueAt(form.values, path));
  const messages = form.messagesAt(path);
  const isReport = question.type === 'radio_report_problem';
  const choices = question.choices?.length ? question.choices : REPORT_CHOICES;
  const inline = question.type === 'radio' ? question.inline : true;
  return (
    <FieldSetFrame
      question={question}
      legendId={`${id}-legend`}
      messages={messages}
      role="radiogroup"
      className={inline ? 'inline' : 'vertical'}
    >
      <div className="choices">
        {optionsOf(choices, question.labels).map((option, i) => (
          <label key={option.value} className="choice">
            <input
              id={i === 0 ? id : undefined}
              type="radio"
              name={id}
              value={option.value}
              checked={value === option.value}
              onChange={() => {
                form.setValue(path, option.value);
                form.touch(path);
              }}
            />
            <span>{option.label}</span>
          </label>
        ))}
      </div>
      {isReport && value === choices[0] && <ProblemNotice question={question} />}
    </FieldSetFrame>
  );
}

function ProblemNotice({ question }: { question: RadioReportProblemQuestion }): ReactElement {
  const options = question.options ?? {};
  return (
    <div className="problem-notice" role="note">
      <p>
        <strong>This files a problem report for the tool:</strong>{' '}
        {options.problem_description || 'a problem was reported.'}
      </p>
      {options.safety_hazard && <p>It is reported as a safety hazard.</p>}
      {options.force_shutdown && <p>The tool will be shut down until staff clear it.</p>}
    </div>
  );
}

export function CheckboxField({ question, path }: FieldProps<CheckboxQuestion>): ReactElement {
  const form = useForm();
  const id = fieldId(form.formId, path);
  const chosen = asList(valueAt(form.values, path));
  const messages = form.messagesAt(path);
  const toggle = (choice: string, on: boolean): void => {
    // Keep the definition's order whatever the order of clicks.
    const next = question.choices.filter((c) => (c === choice ? on : chosen.includes(c)));
    form.setValue(path, next);
    form.touch(path);
  };
  return (
    <FieldSetFrame
      question={question}
      legendId={`${id}-legend`}
      messages={messages}
      className={question.inline ? 'inline' : 'vertical'}
    >
      <div className="choices">
        {optionsOf(question.choices, question.labels).map((option, i) => (
          <label key={option.value} className="choice">
            <input
              id={i === 0 ? id : undefined}
              type="checkbox"
              value={option.value}
              checked={chosen.includes(option.value)}
              onChange={(e) => toggle(option.value, e.target.checked)}
              aria-invalid={messages.length > 0 || undefined}
            />
            <span>{option.label}</span>
          </label>
        ))}
      </div>
    </FieldSetFrame>
  );
}

export function DropdownField({ question, path }: FieldProps<DropdownQuestion>): ReactElement {
  const form = useForm();
  const id = fieldId(form.formId, path);
  const value = asText(valueAt(form.values, path));
  const messages = form.messagesAt(path);
  return (
    <FieldFrame question={question} controlId={id} messages={messages}>
      <select
        id={id}
        value={value}
        aria-required={question.required || undefined}
        aria-invalid={messages.length > 0 || undefined}
        aria-describedby={describedBy(
          question.help && `${id}-help`,
          messages.length > 0 && `${id}-messages`,
        )}
        onChange={(e) => {
          form.setValue(path, e.target.value);
          form.touch(path);
        }}
        onBlur={() => form.blurred(path)}
      >
        <option value="">Choose…</option>
        {optionsOf(question.choices, question.labels).map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}
