import type { ReactElement } from 'react';
import { FormContext } from './FormContext.js';
import { QuestionField } from './QuestionField.js';
import type { QuestionForm } from './useQuestionForm.js';

/** All questions of a form, plus a summary of what still needs attention after a submit. */
export function QuestionFormFields({ form }: { form: QuestionForm }): ReactElement {
  return (
    <FormContext.Provider value={form}>
      <ProblemSummary form={form} />
      {form.questions.length === 0 && <p className="hint">No questions to answer.</p>}
      {form.questions.map((q) => (
        <QuestionField key={q.name} question={q} path={[q.name]} />
      ))}
    </FormContext.Provider>
  );
}

function ProblemSummary({ form }: { form: QuestionForm }): ReactElement | null {
  if (!form.submitted || form.problems.length === 0) return null;
  const count = form.problems.length;
  return (
    <div className="problem-summary" role="alert">
      <p>
        {count === 1 ? 'One answer needs attention' : `${count} answers need attention`} before you
        can continue:
      </p>
      <ul>
        {form.problems.map((p, i) => (
          <li key={`${p.path.join('.')}-${p.rule}-${i}`}>{p.message}</li>
        ))}
      </ul>
    </div>
  );
}
