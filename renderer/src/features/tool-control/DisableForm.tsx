import type { FormEvent, ReactElement } from 'react';
import type { ToolStatus } from '../../../../shared/api.js';
import { call } from '../../bridge.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QuestionFormFields } from '../forms/QuestionFormFields.js';
import { dropDrafts, postUsageDraft } from '../forms/drafts.js';
import { useQuestionForm } from '../forms/useQuestionForm.js';
import { useStationStore } from '../../stores/station.js';
import { useToolAction } from './useToolAction.js';

interface DisableFormProps {
  status: ToolStatus;
  /** Staff ending someone else's usage see whose it is. */
  heading: string;
  onDone: (message: string) => void;
}

/** Answer the post-usage questions and end the usage. */
export function DisableForm({ status, heading, onDone }: DisableFormProps): ReactElement {
  const tool = status.tool;
  // Typed answers stay while the person looks at another tab (drafts.ts), per usage; the key is
  // the pending form's too, so a usage force-ended meanwhile keeps what was typed for it.
  const draft = postUsageDraft(status.active?.uuid ?? tool.name);
  const form = useQuestionForm(tool.post_usage_questions, undefined, draft);
  const showStatus = useStationStore((s) => s.showStatus);
  const action = useToolAction();

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    // Enter in a field while the call is under way (the button is only aria-disabled).
    if (action.busy) return;
    const answers = form.submit();
    if (!answers) return;
    void action.run(
      async () => {
        // For the usage the form was shown for: not another begun meanwhile.
        const usage = status.active?.uuid;
        await call('toolControl.disable', {
          tool: tool.name,
          answers,
          ...(usage === undefined ? {} : { usage }),
        });
        dropDrafts(draft);
        await showStatus(() => call('toolControl.status', { tool: tool.name }));
        onDone(`${tool.name} is disabled; the usage has ended.`);
      },
      (error) => form.showServerProblems(error),
    );
  };

  return (
    <form className="panel" noValidate onSubmit={onSubmit} aria-labelledby="disable-title">
      <h2 id="disable-title">{heading}</h2>
      {tool.post_usage_questions.length > 0 && <h3>Post-usage questions</h3>}
      <QuestionFormFields form={form} />
      <ErrorMessage message={action.error} />
      <div className="actions">
        {/* aria-disabled, not disabled, while busy: see EnableForm. */}
        <button type="submit" className="primary" aria-disabled={action.busy || undefined}>
          {action.busy ? 'Disabling…' : 'Disable'}
        </button>
      </div>
    </form>
  );
}
