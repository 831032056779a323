import { useMemo } from 'react';
import type { KeyboardEvent, ReactElement } from 'react';
import { z } from 'zod';
import {
  parseQuestions,
  serializeQuestions,
  type Question,
} from '../../../../shared/questions/index.js';
import { describedBy, Messages } from '../../features/forms/FieldFrame.js';
import { QuestionFormFields } from '../../features/forms/QuestionFormFields.js';
import { useQuestionForm } from '../../features/forms/useQuestionForm.js';

export type QuestionListCheck =
  { ok: true; questions: Question[] } | { ok: false; problems: string[] };

/** The JSON text of a question list, read and checked by the same parser the server uses. */
export function checkQuestionText(text: string): QuestionListCheck {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === '' ? '[]' : text);
  } catch (error) {
    return { ok: false, problems: [`not valid JSON: ${(error as Error).message}`] };
  }
  const parsed = parseQuestions(value);
  return parsed.ok ? parsed : { ok: false, problems: parsed.problems.map((p) => p.message) };
}

export const questionText = (questions: unknown[]): string => JSON.stringify(questions, null, 2);

/** The question lists arrive as JSON text; the schema reads and checks them like the server. */
export const questionListText = z.string().transform((text, context) => {
  const check = checkQuestionText(text);
  if (!check.ok) {
    for (const message of check.problems) context.addIssue({ code: 'custom', message });
    return z.NEVER;
  }
  return JSON.parse(text.trim() === '' ? '[]' : text) as unknown;
});

/**
 * A tool's question list as JSON (the spec 000 language) beside a live preview of the form as
 * people will see it at the station: every keystroke is checked, problems are listed in
 * words, and the preview can be filled in to try its rules and formulas.
 */
export function QuestionListEditor({
  id,
  label,
  text,
  onChange,
  serverMessages,
}: {
  id: string;
  label: string;
  text: string;
  onChange: (text: string) => void;
  serverMessages: string[];
}): ReactElement {
  const check = useMemo(() => checkQuestionText(text), [text]);
  const messages = check.ok ? serverMessages : check.problems;
  const format = (): void => {
    if (check.ok) onChange(questionText(serializeQuestions(check.questions)));
  };
  return (
    <div className="question-editor">
      <div className={messages.length ? 'field invalid' : 'field'}>
        <label htmlFor={id}>{label}</label>
        <p id={`${id}-hint`} className="help">
          A JSON list of questions in the usage-question language (spec 000).
        </p>
        <textarea
          id={id}
          className="code"
          rows={18}
          spellCheck={false}
          value={text}
          aria-invalid={messages.length > 0 || undefined}
          aria-describedby={describedBy(`${id}-hint`, messages.length > 0 && `${id}-messages`)}
          onChange={(e) => onChange(e.target.value)}
        />
        <Messages id={`${id}-messages`} messages={messages} />
        <div className="actions">
          <button
            type="button"
            className="secondary"
            disabled={!check.ok}
            // Begins with the words shown, so that speech control can name it by them.
            aria-label={`Tidy JSON of the ${label.toLowerCase()}`}
            onClick={format}
          >
            Tidy JSON
          </button>
        </div>
      </div>
      <section className="preview" aria-label={`Preview: ${label}`}>
        <h3>Preview</h3>
        {check.ok ? (
          <Preview
            // A changed definition starts the preview afresh.
            key={JSON.stringify(serializeQuestions(check.questions))}
            questions={check.questions}
          />
        ) : (
          <p className="hint">The preview shows once the list has no problems.</p>
        )}
      </section>
    </div>
  );
}

/**
 * Enter in a one-line field submits the form around it, and the preview sits inside its
 * editor's form: it saved the tool, half-made edits and all, and sent it to the stations. In
 * the preview, Enter checks the answers, as it submits the form at the station.
 */
function enterChecks(check: () => void) {
  return (e: KeyboardEvent<HTMLDivElement>): void => {
    const target = e.target as HTMLElement;
    if (e.key !== 'Enter' || !(target instanceof HTMLInputElement)) return;
    e.preventDefault();
    check();
  };
}

function Preview({ questions }: { questions: Question[] }): ReactElement {
  const form = useQuestionForm(questions);
  const submitted = form.submitted && form.problems.length === 0;
  return (
    <div className="preview-form" onKeyDown={enterChecks(() => form.submit())}>
      <QuestionFormFields form={form} />
      <div className="actions">
        <button type="button" className="secondary" onClick={() => form.submit()}>
          Check answers
        </button>
        <button type="button" className="secondary" onClick={() => form.reset()}>
          Clear
        </button>
      </div>
      {submitted && (
        <p className="notice" role="status">
          These answers would be accepted.
        </p>
      )}
    </div>
  );
}
