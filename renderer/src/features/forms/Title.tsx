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

/** The star after a required field's label; the field itself says so (aria-required). */
export function RequiredStar(): ReactElement {
  return (
    <span className="required-mark" aria-hidden="true" title="required">
      {' *'}
    </span>
  );
}

export function RequiredMark({ question }: { question: Question }): ReactElement | null {
  return question.required ? <RequiredStar /> : null;
}
