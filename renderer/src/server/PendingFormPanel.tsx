import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import type { ServerPendingForm } from '../../../shared/api.js';
import type { Question } from '../../../shared/questions/index.js';
import type { BridgeError } from '../bridge.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { QuestionFormFields } from '../features/forms/QuestionFormFields.js';
import { dropDrafts } from '../features/forms/drafts.js';
import { useQuestionForm } from '../features/forms/useQuestionForm.js';
import { errorText, formatDateTime } from '../format.js';
import { serverCall } from './serverBridge.js';
import { useServerStore } from './store.js';

/** How a pending form is read again (PendingFormPanel onReload). */
export interface ReloadOptions {
  /** False: the focus stays where it is (on a field refused), not on the new form's heading. */
  focus?: boolean;
}

/** Whether the server's problems name a question the form does not have. */
function namesOtherQuestions(error: BridgeError, questions: Question[]): boolean {
  if (error.code !== 'validation_failed') return false;
  const problems = (error.details as { problems?: unknown } | undefined)?.problems;
  if (!Array.isArray(problems)) return false;
  const names = new Set(questions.map((q) => q.name));
  return problems.some((p: unknown) => {
    const first = (p as { path?: unknown[] } | null)?.path?.[0];
    return typeof first === 'string' && !names.has(first);
  });
}

/**
 * One force-ended usage whose post-usage answers are owed: the tool's questions with live
 * validation; the server checks them again and stores them only if the event did not change
 * since the form was loaded (its version).
 */
export function PendingFormPanel({
  item,
  onDone,
  onReload,
  focusRequest = null,
}: {
  item: ServerPendingForm;
  onDone: (message: string) => void;
  /** Reads the form again; its heading takes the focus unless `focus` is false. */
  onReload: (options?: ReloadOptions) => void;
  /** A new object each time the form's heading is to take the focus (after a reload). */
  focusRequest?: object | null;
}): ReactElement {
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focusRequest) heading.current?.focus();
  }, [focusRequest]);
  const { usage, questions, version } = item;
  const account = useServerStore((s) => s.account);
  // What was typed outlives a login that ends meanwhile: the same person, logged in again,
  // finds it (store.ts drops it at a logout of their own, or another person's login). Not
  // per version: a form refused as stale and read again keeps the answers typed into it.
  const draft = `pending:${account?.id ?? 0}:${usage.uuid}`;
  const form = useQuestionForm(questions, undefined, draft);
  const failed = useServerStore((s) => s.failed);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [stale, setStale] = useState(false);

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    if (busy) return;
    const answers = form.submit();
    if (!answers) return;
    setBusy(true);
    setError(null);
    serverCall('usage.completePendingServer', { usage: usage.uuid, answers, version })
      .then(() => {
        dropDrafts(draft);
        onDone(`Thank you: the answers for your usage of ${usage.tool_name} are saved.`);
      })
      .catch((err: unknown) => {
        const bridgeError = failed(err);
        if (bridgeError.code === 'unauthenticated') return;
        if (namesOtherQuestions(bridgeError, questions)) {
          // The tool's questions changed since this form was read (the server checks the
          // answers against them as they are now): read again, what was typed stays, and the
          // new questions' problems show at them.
          form.showServerProblems(bridgeError);
          setError(
            'The questions for this usage changed since this form was loaded: it shows them as ' +
              'they are now. Answer the new ones and submit again.',
          );
          onReload();
          return;
        }
        if (form.showServerProblems(bridgeError)) {
          // Answers this form found right, refused by the server's check: the questions'
          // rules changed since it was read (a limit lowered, a choice taken away). Read again,
          // so that the fields know them; what was typed stays, and the focus stays on the
          // first field refused (showServerProblems put it there).
          onReload({ focus: false });
          return;
        }
        if (bridgeError.code === 'conflict') setStale(true);
        setError(errorText(bridgeError));
      })
      .finally(() => setBusy(false));
  };

  const who = usage.user_name;
  return (
    <form className="panel pending" noValidate onSubmit={onSubmit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} ref={heading} tabIndex={-1}>
        {`Post-usage questions: ${usage.tool_name}`}
      </h2>
      <p>
        {`Usage of ${usage.tool_name} by ${who} for ${usage.project_name}, from ${formatDateTime(
          usage.start,
        )} to ${formatDateTime(usage.end)}, was ended without its post-usage answers. Please answer them now.`}
      </p>
      <QuestionFormFields form={form} />
      <ErrorMessage message={error} />
      <div className="actions">
        {stale && (
          <button type="button" className="secondary" onClick={() => onReload()}>
            Reload
          </button>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Submit answers'}
        </button>
      </div>
    </form>
  );
}
