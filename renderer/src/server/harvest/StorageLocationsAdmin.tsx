import { useRef, useState } from 'react';
import type { ReactElement } from 'react';
import {
  storageLocationCreate,
  storageLocationPatch,
  type StorageLocationOut,
} from '../../../../shared/harvest/management.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { EditorPanel, ListPanel, useSelection } from '../admin/layout.js';
import { serverCall } from '../serverBridge.js';
import { DeleteRecord } from './DeleteRecord.js';
import { CheckControl, SelectControl, TextControl } from './formFields.js';
import { useHarvestAdminStore } from './store.js';
import { useResourceForm } from './useResourceForm.js';

const TYPE_LABELS = {
  local: 'A folder the station writes to (local disk or share)',
  server: 'Upload to this server',
} as const;

/** Storage locations: where instruments' files go (base_path is the root of every template). */
export function StorageLocationsAdmin(): ReactElement {
  const locations = useHarvestAdminStore((s) => s.storageLocations);
  const { selected, current, notice, select, saved } = useSelection(locations);
  const [deleted, setDeleted] = useState<string | null>(null);
  return (
    <div className="admin-stack">
      {deleted && (
        <p className="notice" role="status">
          {deleted}
        </p>
      )}
      <div className="admin-layout">
        <ListPanel
          title="Storage locations"
          newLabel="New storage location"
          onNew={() => select('new')}
          headers={['Name', 'Type', 'Base path', 'Enabled']}
          rows={locations.map((l) => ({
            id: l.id,
            label: l.name,
            cells: [l.type, l.base_path, l.enabled ? 'yes' : 'no'],
          }))}
          selected={selected}
          onSelect={(id) => {
            setDeleted(null);
            select(id);
          }}
        />
        {selected !== null && (
          <StorageLocationEditor
            key={current?.id ?? 'new'}
            location={current}
            notice={notice}
            onSaved={saved}
            onDeleted={(message) => {
              select(null);
              setDeleted(message);
            }}
            onClose={() => select(null)}
          />
        )}
      </div>
    </div>
  );
}

function StorageLocationEditor({
  location,
  notice,
  onSaved,
  onDeleted,
  onClose,
}: {
  location: StorageLocationOut | undefined;
  notice: string | null;
  onSaved: (location: StorageLocationOut, message: string) => void;
  onDeleted: (message: string) => void;
  onClose: () => void;
}): ReactElement {
  const put = useHarvestAdminStore((s) => s.put);
  const drop = useHarvestAdminStore((s) => s.drop);
  // The record as this editor loaded it (or last saved it): a save refused if another admin
  // changed it meanwhile.
  const loaded = useRef(location);
  const form = useResourceForm({
    name: location?.name ?? '',
    type: location?.type ?? 'local',
    base_path: location?.base_path ?? '',
    enabled: location?.enabled ?? true,
  });
  const v = form.values;
  const input = { ...v, base_path: v.base_path.trim() };

  const save = (): void => {
    if (location) {
      void form.submit(storageLocationPatch, input, async (parsed) => {
        const { item } = await serverCall('admin.storageLocations.update', {
          ...parsed,
          id: location.id,
          loaded: loaded.current,
        });
        loaded.current = item;
        put('storageLocations', item);
        onSaved(item, `Saved ${item.name}.`);
      });
    } else {
      void form.submit(storageLocationCreate, input, async (parsed) => {
        const { item } = await serverCall('admin.storageLocations.create', parsed);
        put('storageLocations', item);
        onSaved(item, `Created ${item.name}.`);
      });
    }
  };

  const remove = (): void => {
    if (!location) return;
    void form.run(async () => {
      await serverCall('admin.storageLocations.delete', { id: location.id });
      drop('storageLocations', location.id);
      onDeleted(`Deleted storage location ${location.name}.`);
    });
  };

  return (
    <EditorPanel
      title={location ? `Edit ${location.name}` : 'New storage location'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
    >
      <TextControl
        form={form}
        path="name"
        label="Name"
        hint="Redirect hooks name locations by it."
        value={v.name}
        onChange={(value) => form.set('name', value)}
      />
      <SelectControl
        form={form}
        path="type"
        label="Type"
        value={v.type}
        onChange={(value) => form.set('type', value as keyof typeof TYPE_LABELS)}
        options={Object.entries(TYPE_LABELS).map(([value, label]) => ({ value, label }))}
      />
      <TextControl
        form={form}
        path="base_path"
        label="Base path"
        hint={
          v.type === 'local'
            ? 'An absolute path on the station: /data/archive, D:\\archive or \\\\server\\share.'
            : 'An absolute path on this server.'
        }
        code
        value={v.base_path}
        onChange={(value) => form.set('base_path', value)}
      />
      <CheckControl
        form={form}
        path="enabled"
        label="Enabled (files may be sent here)"
        checked={v.enabled}
        onChange={(checked) => form.set('enabled', checked)}
      />
      {location && (
        <div className="actions">
          <DeleteRecord
            what={`storage location ${location.name}`}
            busy={form.busy}
            onDelete={remove}
          >
            <p>
              Only a location no instrument or hook uses and no transfer went to can be deleted;
              otherwise disable it.
            </p>
          </DeleteRecord>
        </div>
      )}
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
