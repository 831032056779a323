import { useState, type ReactElement } from 'react';
import { adminToolInput, type AdminTool } from '../../../../shared/adminApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { errorText, formatDateTime } from '../../format.js';
import { serverCall } from '../serverBridge.js';
import { IdChecklist, TextInput, Toggle } from './fields.js';
import { EditorPanel, ListPanel, useSelection } from './layout.js';
import { QuestionListEditor, questionListText, questionText } from './QuestionListEditor.js';
import { useServerStore } from '../store.js';
import { useAdminStore } from './store.js';
import { useAdminForm } from './useAdminForm.js';

const toolForm = adminToolInput.extend({
  pre_usage_questions: questionListText,
  post_usage_questions: questionListText,
});

/** Tools, their usage question forms (with a live preview), and who is qualified on them. */
export function ToolsAdmin(): ReactElement {
  const tools = useAdminStore((s) => s.tools);
  const { selected, current, notice, select, saved } = useSelection(tools);
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  return (
    <div className="admin-layout wide-editor">
      <ListPanel
        title="Tools"
        newLabel="New tool"
        onNew={() => select('new')}
        headers={['Name', 'Category', 'State', 'Pre-usage', 'Post-usage', 'Qualified']}
        rows={tools.map((t) => ({
          id: t.id,
          label: t.name,
          cells: [
            t.category,
            t.shutdown ? 'shut down' : t.operational ? 'operational' : 'not operational',
            count(t.pre_usage_questions.length, 'question'),
            count(t.post_usage_questions.length, 'question'),
            count(t.qualified_users.length, 'person'),
          ],
        }))}
        selected={selected}
        onSelect={select}
      />
      {selected !== null && (
        <ToolEditor
          key={current?.id ?? 'new'}
          tool={current}
          notice={notice}
          onSaved={saved}
          onClose={() => select(null)}
        />
      )}
    </div>
  );
}

/**
 * A tool shut down by a problem report, with a way to bring it back from here: for a station
 * replaced or out of reach (its report held the tool "not operational" for good); a station
 * that is reachable takes the resolution at its next pull, as if staff cleared it there.
 */
function ShutdownNotice({
  tool,
  shutdown,
}: {
  tool: AdminTool;
  shutdown: NonNullable<AdminTool['shutdown']>;
}): ReactElement {
  const load = useAdminStore((s) => s.load);
  // A login that ended meanwhile is the server store's to handle (back to the log-in page).
  const failed = useServerStore((s) => s.failed);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const bringBack = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await serverCall('usage.clearShutdownServer', { tool: tool.id });
      await load();
    } catch (e) {
      const bridgeError = failed(e);
      if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="notice">
      <p>
        {`Shut down since ${formatDateTime(shutdown.since)}: ${shutdown.reason}. Staff clear it at the station, or here once the problem is dealt with: the station takes it at its next connection.`}
      </p>
      <button
        type="button"
        className="secondary"
        aria-disabled={busy}
        onClick={() => {
          if (!busy) void bringBack();
        }}
      >
        Bring back into service
      </button>
      <ErrorMessage message={error} />
    </div>
  );
}

function ToolEditor({
  tool,
  notice,
  onSaved,
  onClose,
}: {
  tool: AdminTool | undefined;
  notice: string | null;
  onSaved: (tool: AdminTool, message: string) => void;
  onClose: () => void;
}): ReactElement {
  const users = useAdminStore((s) => s.users);
  const putTool = useAdminStore((s) => s.putTool);
  const form = useAdminForm({
    ...(tool ? { id: tool.id } : {}),
    name: tool?.name ?? '',
    category: tool?.category ?? '',
    operational: tool?.operational ?? true,
    visible: tool?.visible ?? true,
    pre_usage_questions: questionText(tool?.pre_usage_questions ?? []),
    post_usage_questions: questionText(tool?.post_usage_questions ?? []),
    qualified_users: tool?.qualified_users ?? [],
    ...(tool ? { updated_at: tool.updated_at } : {}),
  });

  const save = (): void => {
    void form.submit(toolForm, async (input) => {
      const result = await serverCall('admin.tools.save', input);
      putTool(result.tool);
      form.set('updated_at', result.tool.updated_at);
      onSaved(
        result.tool,
        `Saved ${result.tool.name}. Stations that run it get the change within seconds.`,
      );
    });
  };

  return (
    <EditorPanel
      title={tool ? `Edit ${tool.name}` : 'New tool'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
    >
      {tool?.shutdown && <ShutdownNotice tool={tool} shutdown={tool.shutdown} />}
      <div className="field-grid">
        <TextInput form={form} field="name" label="Name" />
        <TextInput form={form} field="category" label="Category" />
      </div>
      <Toggle form={form} field="operational" label="Operational" />
      <Toggle form={form} field="visible" label="Visible" />
      <QuestionListEditor
        id={form.fieldId('pre_usage_questions')}
        label="Pre-usage questions"
        text={form.values.pre_usage_questions}
        onChange={(text) => form.set('pre_usage_questions', text)}
        serverMessages={form.errors.pre_usage_questions ?? []}
      />
      <QuestionListEditor
        id={form.fieldId('post_usage_questions')}
        label="Post-usage questions"
        text={form.values.post_usage_questions}
        onChange={(text) => form.set('post_usage_questions', text)}
        serverMessages={form.errors.post_usage_questions ?? []}
      />
      <IdChecklist
        form={form}
        field="qualified_users"
        label="Qualified people"
        options={users.map((u) => ({
          id: u.id,
          label: `${u.username}${u.first_name || u.last_name ? ` (${`${u.first_name} ${u.last_name}`.trim()})` : ''}`,
        }))}
        empty="No people yet."
      />
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
