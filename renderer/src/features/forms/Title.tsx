import type { ReactElement } from 'react';
import type { Question } from '../../../../shared/questions/index.js';
import { questionLabel, sanitizeTitleHtml } from '../../../../shared/questions/index.js';

/** A question's title: title_html only through the sanitizer, else title, else name. */
export function Title({ question }: { question: Question }): ReactElement {
  if (question.title_html) {
    return (
      <span
        className="title-html"
        dangerouslySetInnerHTML={{ __html: sanitizeTitleHtml(question.title_html) }}
      />
    );
  }
  return <>{questionLabel(question)}</>;
}

export function RequiredMark({ question }: { question: Question }): ReactElement | null {
  if (!question.required) return null;
  return (
    <span className="required-mark" aria-hidden="true" title="required">
      {' *'}
    </span>
  );
}
