import type { FormEvent, ReactElement } from 'react';
import type { PendingForm } from '../../../../shared/api.js';
import { call } from '../../bridge.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { formatDateTime } from '../../format.js';
import { useSessionStore } from '../../stores/session.js';
import { QuestionFormFields } from '../forms/QuestionFormFields.js';
import { dropDrafts, postUsageDraft } from '../forms/drafts.js';
import { useQuestionForm } from '../forms/useQuestionForm.js';
import { useToolAction } from '../tool-control/useToolAction.js';

/** Usage events whose post-usage answers are still owed come first, one at a time. */
export function PendingForms({
  pending,
  onDone,
}: {
  pending: PendingForm[];
  onDone: (message: string) => void;
}): ReactElement | null {
  const first = pending[0];
  if (!first) return null;
  return (
    <PendingFormPanel
      key={first.usage.id}
      item={first}
      position={pending.length > 1 ? ` (1 of ${pending.length})` : ''}
      onDone={onDone}
    />
  );
}

function PendingFormPanel({
  item,
  position,
  onDone,
}: {
  item: PendingForm;
  position: string;
  onDone: (message: string) => void;
}): ReactElement {
  const { usage, questions } = item;
  // Typed answers stay while the person looks at another tab (drafts.ts), as in DisableForm.
  const draft = postUsageDraft(usage.uuid);
  const form = useQuestionForm(questions, undefined, draft);
  const dropPending = useSessionStore((s) => s.dropPending);
  const action = useToolAction();

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    // Enter in a field while the call is under way (the button is only aria-disabled).
    if (action.busy) return;
    const answers = form.submit();
    if (!answers) return;
    void action.run(
      async () => {
        await call('usage.completePending', { usage: usage.id, answers });
        dropDrafts(draft);
        dropPending(usage.id);
        onDone(`Thank you: the answers for your usage of ${usage.tool_name} are saved.`);
      },
      (error) => form.showServerProblems(error),
    );
  };

  return (
    <form className="panel pending" noValidate onSubmit={onSubmit} aria-labelledby="pending-title">
      <h2 id="pending-title">Post-usage questions pending{position}</h2>
      <p>
        {`Your usage of ${usage.tool_name} for ${usage.project_name}, from ${formatDateTime(
          usage.start,
        )} to ${formatDateTime(usage.end)}, was ended without its post-usage answers. Please answer them now.`}
      </p>
      <QuestionFormFields form={form} />
      <ErrorMessage message={action.error} />
      <div className="actions">
        {/* aria-disabled, not disabled, while busy: see EnableForm. */}
        <button type="submit" className="primary" aria-disabled={action.busy || undefined}>
          {action.busy ? 'Saving…' : 'Submit answers'}
        </button>
      </div>
    </form>
  );
}
