import type { ReactElement } from 'react';
import type { GroupQuestion } from '../../../../shared/questions/index.js';
import { groupHasRequiredField, questionLabel } from '../../../../shared/questions/index.js';
import { Help, Messages, describedBy, widthStyle } from './FieldFrame.js';
import { useForm } from './FormContext.js';
import { QuestionField } from './QuestionField.js';
import { RequiredMark, Title } from './Title.js';
import { fieldId, groupItemsAt } from './values.js';

/**
 * A repeatable group: one fieldset per repetition ("Samples 2"), "Add another" while fewer
 * than max_number, and a remove button on each repetition beyond the one required (a required
 * group's, or one with a required field's).
 */
export function GroupField({ question }: { question: GroupQuestion }): ReactElement {
  const form = useForm();
  const path = [question.name];
  const id = fieldId(form.formId, path);
  const items = groupItemsAt(form.values, question.name);
  const max = question.max_number ?? 1;
  // The last entry stays when the core would ask for it: a required group, or one with a
  // required field.
  const minimum = question.required || groupHasRequiredField(question) ? 1 : 0;
  const label = questionLabel(question);
  const messages = form.messagesAt(path);
  return (
    <fieldset
      className={messages.length ? 'group invalid' : 'group'}
      style={widthStyle(question)}
      aria-describedby={describedBy(question.help && `${id}-help`, `${id}-messages`)}
    >
      <legend>
        <Title question={question} />
        <RequiredMark question={question} />
        {question.required && <span className="visually-hidden"> (required)</span>}
      </legend>
      <Help id={`${id}-help`} question={question} />
      {items.map((_, index) => (
        <fieldset key={index} className="repetition">
          <legend>{`${label} ${index + 1}`}</legend>
          {question.questions.map((sub) => (
            <QuestionField key={sub.name} question={sub} path={[question.name, index, sub.name]} />
          ))}
          {items.length > minimum && (
            <button
              type="button"
              className="secondary"
              onClick={() => {
                form.removeRepetition(question.name, index);
                // The next repetition's Remove button would take this place under the
                // keyboard: a second Enter would remove it too. Focus goes to Add instead.
                window.requestAnimationFrame(() => document.getElementById(id)?.focus());
              }}
            >
              {`Remove ${label} ${index + 1}`}
            </button>
          )}
        </fieldset>
      ))}
      <Messages id={`${id}-messages`} messages={messages} />
      {items.length < max && (
        <button
          id={id}
          type="button"
          className="secondary"
          onClick={() => {
            form.addRepetition(question.name);
            // The last repetition allowed takes this button away, and focus with it (to the
            // page: Tab would go on below the group, past the new fields). Focus goes to the
            // new repetition's first field instead.
            if (items.length + 1 < max) return;
            const index = items.length;
            window.requestAnimationFrame(() => {
              const fields = question.questions.map((sub) =>
                document.getElementById(fieldId(form.formId, [question.name, index, sub.name])),
              );
              fields.find((el) => el !== null)?.focus();
            });
          }}
        >
          {question.group_add_button_name ??
            (items.length === 0 ? `Add ${label}` : `Add another ${label}`)}
        </button>
      )}
      {items.length >= max && max > 1 && <p className="hint">{`At most ${max} repetitions.`}</p>}
    </fieldset>
  );
}
