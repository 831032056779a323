import { useState } from 'react';
import type { ReactElement } from 'react';
import {
  reservationQuestionSetInput,
  type ReservationQuestionSet,
} from '../../../../shared/reservationApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { IdChecklist, TextInput, Toggle } from '../admin/fields.js';
import { EditorPanel, ListPanel, useSelection } from '../admin/layout.js';
import { QuestionListEditor, questionListText, questionText } from '../admin/QuestionListEditor.js';
import { useAdminStore } from '../admin/store.js';
import { useAdminForm } from '../admin/useAdminForm.js';
import { DeleteRecord } from '../harvest/DeleteRecord.js';
import { serverCall } from '../serverBridge.js';
import { useReservationAdminStore } from './adminStore.js';
import { FormPreview } from './FormPreview.js';

const setForm = reservationQuestionSetInput.extend({ questions: questionListText });

/** "every tool", or the names of the chosen ones. */
function scope(ids: number[], all: string, names: { id: number; name: string }[]): string {
  if (ids.length === 0) return all;
  return ids.map((id) => names.find((x) => x.id === id)?.name ?? `#${id}`).join(', ');
}

/**
 * Reservation question sets (spec 000, reservation_questions): where each applies, its
 * questions (JSON with a live preview, as for tools), and a preview of the merged form a
 * booking of a chosen tool or area for a project would show.
 */
export function QuestionSetsAdmin(): ReactElement {
  const sets = useReservationAdminStore((s) => s.sets);
  const areas = useReservationAdminStore((s) => s.areas);
  const tools = useAdminStore((s) => s.tools);
  const projects = useAdminStore((s) => s.projects);
  const { selected, current, notice, select, saved } = useSelection(sets);
  const [deleted, setDeleted] = useState<string | null>(null);
  const appliesTo = (s: ReservationQuestionSet): string =>
    [
      s.tool_reservations && `tools: ${scope(s.only_for_tools, 'all', tools)}`,
      s.area_reservations && `areas: ${scope(s.only_for_areas, 'all', areas)}`,
    ]
      .filter(Boolean)
      .join('; ') || 'nothing';
  return (
    <div className="admin-stack">
      {deleted && (
        <p className="notice" role="status">
          {deleted}
        </p>
      )}
      <div className="admin-layout wide-editor">
        <ListPanel
          title="Reservation question sets"
          newLabel="New question set"
          onNew={() => {
            setDeleted(null);
            select('new');
          }}
          headers={['Name', 'Enabled', 'Applies to', 'Projects', 'Questions']}
          rows={sets.map((s) => ({
            id: s.id,
            label: s.name,
            cells: [
              s.enabled ? 'yes' : 'no',
              appliesTo(s),
              scope(s.only_for_projects, 'all', projects),
              String(s.questions.length),
            ],
          }))}
          selected={selected}
          onSelect={(id) => {
            setDeleted(null);
            select(id);
          }}
        />
        {selected !== null && (
          <SetEditor
            key={current?.id ?? 'new'}
            set={current}
            notice={notice}
            onSaved={saved}
            onDeleted={(message) => {
              select(null);
              setDeleted(message);
            }}
            onClose={() => select(null)}
          />
        )}
        <FormPreview />
      </div>
    </div>
  );
}

function SetEditor({
  set,
  notice,
  onSaved,
  onDeleted,
  onClose,
}: {
  set: ReservationQuestionSet | undefined;
  notice: string | null;
  onSaved: (set: ReservationQuestionSet, message: string) => void;
  onDeleted: (message: string) => void;
  onClose: () => void;
}): ReactElement {
  const tools = useAdminStore((s) => s.tools);
  const projects = useAdminStore((s) => s.projects);
  const areas = useReservationAdminStore((s) => s.areas);
  const putSet = useReservationAdminStore((s) => s.putSet);
  const dropSet = useReservationAdminStore((s) => s.dropSet);
  const form = useAdminForm({
    ...(set ? { id: set.id } : {}),
    enabled: set?.enabled ?? true,
    name: set?.name ?? '',
    questions: questionText(set?.questions ?? []),
    tool_reservations: set?.tool_reservations ?? true,
    only_for_tools: set?.only_for_tools ?? [],
    area_reservations: set?.area_reservations ?? false,
    only_for_areas: set?.only_for_areas ?? [],
    only_for_projects: set?.only_for_projects ?? [],
    // As read: a save of a set another admin changed since is refused, not put over theirs.
    ...(set ? { updated_at: set.updated_at } : {}),
  });

  const save = (): void => {
    void form.submit(setForm, async (input) => {
      const result = await serverCall('admin.reservationQuestionSets.save', input);
      form.set('updated_at', result.set.updated_at);
      putSet(result.set);
      onSaved(result.set, `Saved ${result.set.name}.`);
    });
  };

  const remove = (): void => {
    if (!set) return;
    void form.run(async () => {
      await serverCall('admin.reservationQuestionSets.delete', { id: set.id });
      dropSet(set.id);
      onDeleted(`Deleted the question set ${set.name}. Reservations keep the answers given.`);
    });
  };

  return (
    <EditorPanel
      title={set ? `Edit ${set.name}` : 'New question set'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
    >
      <TextInput form={form} field="name" label="Name" />
      <Toggle form={form} field="enabled" label="Enabled" />
      <QuestionListEditor
        id={form.fieldId('questions')}
        label="Questions"
        text={form.values.questions}
        onChange={(text) => form.set('questions', text)}
        serverMessages={form.errors.questions ?? []}
      />
      <div className="field-grid">
        <div>
          <Toggle form={form} field="tool_reservations" label="Asked when booking a tool" />
          <IdChecklist
            form={form}
            field="only_for_tools"
            label="Only for these tools (none chosen: every tool)"
            options={tools.map((t) => ({ id: t.id, label: t.name }))}
            empty="No tools yet."
          />
        </div>
        <div>
          <Toggle form={form} field="area_reservations" label="Asked when booking an area" />
          <IdChecklist
            form={form}
            field="only_for_areas"
            label="Only for these areas (none chosen: every area)"
            options={areas.map((a) => ({ id: a.id, label: a.name }))}
            empty="No areas yet."
          />
        </div>
        <IdChecklist
          form={form}
          field="only_for_projects"
          label="Only for these projects (none chosen: every project)"
          options={projects.map((p) => ({ id: p.id, label: p.name }))}
          empty="No projects yet."
        />
      </div>
      <p className="hint">
        The questions of every enabled set that applies to a booking are asked together, set after
        set; two sets that can apply together may not use the same question name.
      </p>
      {set && (
        <div className="actions">
          <DeleteRecord what={`question set ${set.name}`} busy={form.busy} onDelete={remove}>
            <p>Bookings no longer ask its questions; reservations keep the answers given.</p>
          </DeleteRecord>
        </div>
      )}
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
