import { useRef, useState } from 'react';
import type { ReactElement } from 'react';
import {
  instrumentCreate,
  instrumentPatch,
  type InstrumentOut,
} from '../../../../shared/harvest/management.js';
import {
  DEFAULT_TEMPLATE,
  parseTemplate,
  TEMPLATE_FIELDS,
} from '../../../../shared/harvest/template.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { formatDateTime } from '../../format.js';
import { EditorPanel, ListPanel, useSelection } from '../admin/layout.js';
import { useAdminStore } from '../admin/store.js';
import { serverCall } from '../serverBridge.js';
import { AccessPanel } from './AccessPanel.js';
import { DeleteRecord } from './DeleteRecord.js';
import {
  CheckControl,
  idOrNull,
  idText,
  lines,
  numberOrText,
  SelectControl,
  TextControl,
} from './formFields.js';
import { useHarvestAdminStore } from './store.js';
import { useResourceForm, type PlacedProblem } from './useResourceForm.js';
import { WatchFolders, watchRows } from './WatchFolders.js';

const TEMPLATE_HINT =
  `Where each file goes under the storage location. Fields: ` +
  `${TEMPLATE_FIELDS.map((f) => `{${f}}`).join(' ')}; write {{ and }} for a literal brace.`;

/** Instruments: what each station watches, how long a file must stay still, where it goes. */
export function InstrumentsAdmin(): ReactElement {
  const instruments = useHarvestAdminStore((s) => s.instruments);
  const accounts = useHarvestAdminStore((s) => s.serviceAccounts);
  const locations = useHarvestAdminStore((s) => s.storageLocations);
  const tools = useAdminStore((s) => s.tools);
  const { selected, current, notice, select, saved } = useSelection(instruments);
  const [deleted, setDeleted] = useState<string | null>(null);
  const nameIn = (list: { id: number; name: string }[], id: number | null): string =>
    id === null ? '' : (list.find((x) => x.id === id)?.name ?? `#${id}`);
  return (
    <div className="admin-stack">
      {deleted && (
        <p className="notice" role="status">
          {deleted}
        </p>
      )}
      <div className="admin-layout">
        <ListPanel
          title="Instruments"
          newLabel="New instrument"
          onNew={() => select('new')}
          headers={['Name', 'Tool', 'Service account', 'Storage', 'Enabled', 'Last harvest']}
          rows={instruments.map((i) => ({
            id: i.id,
            label: i.name,
            cells: [
              nameIn(tools, i.tool_id),
              nameIn(accounts, i.service_account_id),
              nameIn(locations, i.storage_location_id),
              i.enabled ? 'yes' : 'no',
              i.last_harvested_at ? formatDateTime(i.last_harvested_at) : 'never',
            ],
          }))}
          selected={selected}
          onSelect={(id) => {
            setDeleted(null);
            select(id);
          }}
        />
        {selected !== null && (
          <div className="admin-stack">
            <InstrumentEditor
              key={current?.id ?? 'new'}
              instrument={current}
              notice={notice}
              onSaved={saved}
              onDeleted={(message) => {
                select(null);
                setDeleted(message);
              }}
              onClose={() => select(null)}
            />
            {current && <AccessPanel key={current.id} instrument={current} />}
          </div>
        )}
      </div>
    </div>
  );
}

function InstrumentEditor({
  instrument,
  notice,
  onSaved,
  onDeleted,
  onClose,
}: {
  instrument: InstrumentOut | undefined;
  notice: string | null;
  onSaved: (instrument: InstrumentOut, message: string) => void;
  onDeleted: (message: string) => void;
  onClose: () => void;
}): ReactElement {
  const tools = useAdminStore((s) => s.tools);
  const accounts = useHarvestAdminStore((s) => s.serviceAccounts);
  const locations = useHarvestAdminStore((s) => s.storageLocations);
  const put = useHarvestAdminStore((s) => s.put);
  const drop = useHarvestAdminStore((s) => s.drop);
  // The record as this editor loaded it (or last saved it): a save refused if another admin
  // changed it meanwhile.
  const loaded = useRef(instrument);
  const rowKey = useRef(0);
  const form = useResourceForm({
    name: instrument?.name ?? '',
    description: instrument?.description ?? '',
    tool_id: idText(instrument?.tool_id),
    service_account_id: idText(instrument?.service_account_id),
    watch: watchRows(instrument?.watch ?? [], () => rowKey.current++),
    stability_seconds: String(instrument?.stability_seconds ?? 5),
    storage_location_id: idText(instrument?.storage_location_id),
    destination_template: instrument?.destination_template ?? DEFAULT_TEMPLATE,
    enabled: instrument?.enabled ?? true,
  });
  const v = form.values;
  const input = {
    name: v.name,
    description: v.description,
    tool_id: v.tool_id === '' ? undefined : Number(v.tool_id),
    service_account_id: idOrNull(v.service_account_id),
    watch: v.watch.map((row) => ({
      path: row.path.trim(),
      include: lines(row.include),
      exclude: lines(row.exclude),
    })),
    stability_seconds: numberOrText(v.stability_seconds),
    storage_location_id: idOrNull(v.storage_location_id),
    destination_template: v.destination_template.trim(),
    enabled: v.enabled,
  };
  // The template's own rules (shared with the server), so they show before a round trip.
  const template = parseTemplate(input.destination_template);
  const templateProblems: PlacedProblem[] = template.ok
    ? []
    : template.problems.map((message) => ({ path: ['destination_template'], message }));

  const save = (): void => {
    if (instrument) {
      void form.submit(
        instrumentPatch,
        input,
        async (parsed) => {
          const { item } = await serverCall('admin.instruments.update', {
            ...parsed,
            id: instrument.id,
            loaded: loaded.current,
          });
          loaded.current = item;
          put('instruments', item);
          onSaved(item, `Saved ${item.name}.`);
        },
        templateProblems,
      );
    } else {
      void form.submit(
        instrumentCreate,
        input,
        async (parsed) => {
          const { item } = await serverCall('admin.instruments.create', parsed);
          put('instruments', item);
          onSaved(item, `Created ${item.name}.`);
        },
        templateProblems,
      );
    }
  };

  const remove = (): void => {
    if (!instrument) return;
    void form.run(async () => {
      await serverCall('admin.instruments.delete', { id: instrument.id });
      drop('instruments', instrument.id);
      onDeleted(`Deleted instrument ${instrument.name}.`);
    });
  };

  const none = (label: string) => ({ value: '', label });
  return (
    <EditorPanel
      title={instrument ? `Edit ${instrument.name}` : 'New instrument'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
    >
      <div className="field-grid">
        <TextControl
          form={form}
          path="name"
          label="Name"
          value={v.name}
          onChange={(value) => form.set('name', value)}
        />
        <SelectControl
          form={form}
          path="tool_id"
          label="Tool"
          value={v.tool_id}
          onChange={(value) => form.set('tool_id', value)}
          options={[none('Choose a tool…'), ...tools.map((t) => option(t))]}
        />
        <SelectControl
          form={form}
          path="service_account_id"
          label="Service account"
          hint="The station that harvests it."
          value={v.service_account_id}
          onChange={(value) => form.set('service_account_id', value)}
          options={[none('None yet'), ...accounts.map((a) => option(a))]}
        />
        <SelectControl
          form={form}
          path="storage_location_id"
          label="Storage location"
          value={v.storage_location_id}
          onChange={(value) => form.set('storage_location_id', value)}
          options={[none('None yet'), ...locations.map((l) => option(l))]}
        />
      </div>
      <TextControl
        form={form}
        path="description"
        label="Description"
        value={v.description}
        onChange={(value) => form.set('description', value)}
      />
      <WatchFolders form={form} rows={v.watch} onChange={(rows) => form.set('watch', rows)} />
      <TextControl
        form={form}
        path="stability_seconds"
        label="Stability seconds"
        hint="How long a file's size and time must stay unchanged before it is taken."
        value={v.stability_seconds}
        onChange={(value) => form.set('stability_seconds', value)}
      />
      <TextControl
        form={form}
        path="destination_template"
        label="Destination template"
        hint={TEMPLATE_HINT}
        code
        value={v.destination_template}
        onChange={(value) => form.set('destination_template', value)}
      />
      <CheckControl
        form={form}
        path="enabled"
        label="Enabled (the station harvests it)"
        checked={v.enabled}
        onChange={(checked) => form.set('enabled', checked)}
      />
      {instrument && (
        <div className="actions">
          <DeleteRecord what={`instrument ${instrument.name}`} busy={form.busy} onDelete={remove}>
            <p>
              Only an instrument without file records, schedules or hooks can be deleted; otherwise
              disable it.
            </p>
          </DeleteRecord>
        </div>
      )}
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}

function option(record: { id: number; name: string }): { value: string; label: string } {
  return { value: String(record.id), label: record.name };
}
