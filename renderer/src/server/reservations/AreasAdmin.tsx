import type { ReactElement } from 'react';
import { areaInput, type AreaView } from '../../../../shared/reservationApi.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { IdChecklist, TextInput } from '../admin/fields.js';
import { EditorPanel, ListPanel, useSelection } from '../admin/layout.js';
import { useAdminStore } from '../admin/store.js';
import { useAdminForm } from '../admin/useAdminForm.js';
import { serverCall } from '../serverBridge.js';
import { useReservationAdminStore } from './adminStore.js';

/** Areas (rooms, bays): a name and the tools in it; booking an area holds its tools. */
export function AreasAdmin(): ReactElement {
  const areas = useReservationAdminStore((s) => s.areas);
  const tools = useAdminStore((s) => s.tools);
  const { selected, current, notice, select, saved } = useSelection(areas);
  const toolName = (id: number): string => tools.find((t) => t.id === id)?.name ?? `#${id}`;
  return (
    <div className="admin-layout">
      <ListPanel
        title="Areas"
        newLabel="New area"
        onNew={() => select('new')}
        headers={['Name', 'Tools']}
        rows={areas.map((a) => ({
          id: a.id,
          label: a.name,
          cells: [a.tools.map(toolName).join(', ') || 'none'],
        }))}
        selected={selected}
        onSelect={select}
      />
      {selected !== null && (
        <AreaEditor
          key={current?.id ?? 'new'}
          area={current}
          notice={notice}
          onSaved={saved}
          onClose={() => select(null)}
        />
      )}
    </div>
  );
}

function AreaEditor({
  area,
  notice,
  onSaved,
  onClose,
}: {
  area: AreaView | undefined;
  notice: string | null;
  onSaved: (area: AreaView, message: string) => void;
  onClose: () => void;
}): ReactElement {
  const tools = useAdminStore((s) => s.tools);
  const putArea = useReservationAdminStore((s) => s.putArea);
  const form = useAdminForm({
    ...(area ? { id: area.id } : {}),
    name: area?.name ?? '',
    tools: area?.tools ?? [],
    // As read: a save of an area another admin changed since is refused, not put over theirs.
    ...(area ? { updated_at: area.updated_at } : {}),
  });

  const save = (): void => {
    void form.submit(areaInput, async (input) => {
      const result = await serverCall('admin.areas.save', input);
      form.set('updated_at', result.area.updated_at);
      putArea(result.area);
      onSaved(result.area, `Saved ${result.area.name}.`);
    });
  };

  return (
    <EditorPanel
      title={area ? `Edit ${area.name}` : 'New area'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
    >
      <TextInput form={form} field="name" label="Name" />
      <IdChecklist
        form={form}
        field="tools"
        label="Tools in this area"
        options={tools.map((t) => ({ id: t.id, label: t.name }))}
        empty="No tools yet."
      />
      <p className="hint">
        Booking the area holds every tool in it: it conflicts with bookings of those tools and of
        other areas sharing one.
      </p>
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
