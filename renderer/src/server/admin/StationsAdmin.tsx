import { useRef, useState } from 'react';
import type { ReactElement } from 'react';
import { z } from 'zod';
import { adminSchemas, type AdminStation } from '../../../../shared/adminApi.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { toBridgeError } from '../../bridge.js';
import { errorText, formatDateTime } from '../../format.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';
import { SelectInput, TextInput, Toggle } from './fields.js';
import { EditorPanel, ListPanel, type Selection } from './layout.js';
import { SecretOnce } from './SecretOnce.js';
import { useAdminStore } from './store.js';
import { useAdminForm } from './useAdminForm.js';

/** The form holds the tool as the text of a <select>: '' is none. */
const stationForm = z
  .object({
    id: z.number().int().positive().optional(),
    name: adminSchemas['admin.stations.create'].shape.name,
    description: adminSchemas['admin.stations.create'].shape.description,
    tool: z.string().transform((value) => (value === '' ? null : Number(value))),
    enabled: z.boolean(),
  })
  .strict();

/** Stations: the PCs beside the tools, each syncing with its own key. */
export function StationsAdmin(): ReactElement {
  const stations = useAdminStore((s) => s.stations);
  const [selected, setSelected] = useState<Selection>(null);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const current =
    typeof selected === 'number' ? stations.find((s) => s.id === selected) : undefined;
  return (
    <div className="admin-stack">
      {secret && (
        <SecretOnce
          title={`Key of station ${secret.name}`}
          secret={secret.key}
          usage={`Start the station with it: labstation station --data DIR --server ${window.location.origin}/ --key <key>, or enter it in the station's settings.`}
          onDone={() => setSecret(null)}
        />
      )}
      <div className="admin-layout">
        <ListPanel
          title="Stations"
          newLabel="New station"
          onNew={() => setSelected('new')}
          headers={['Name', 'Tool', 'Enabled', 'Last seen', 'Host']}
          rows={stations.map((s) => ({
            id: s.id,
            label: s.name,
            cells: [
              s.tool_name ?? '',
              s.enabled ? 'yes' : 'no',
              s.last_seen_at ? formatDateTime(s.last_seen_at) : 'never',
              s.host ?? '',
            ],
          }))}
          selected={selected}
          onSelect={setSelected}
        />
        {selected !== null && (
          <StationEditor
            key={current?.id ?? 'new'}
            station={current}
            onSaved={(station, key) => {
              setSelected(station.id);
              if (key) setSecret({ name: station.name, key });
            }}
            onClose={() => setSelected(null)}
          />
        )}
      </div>
    </div>
  );
}

function StationEditor({
  station,
  onSaved,
  onClose,
}: {
  station: AdminStation | undefined;
  onSaved: (station: AdminStation, key?: string) => void;
  onClose: () => void;
}): ReactElement {
  const tools = useAdminStore((s) => s.tools);
  const putStation = useAdminStore((s) => s.putStation);
  const [saved, setSaved] = useState<string | null>(null);
  // The station as this editor loaded it (or last saved it): a save refused if another admin
  // changed it meanwhile.
  const loaded = useRef(station);
  const [renewing, setRenewing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const form = useAdminForm({
    ...(station ? { id: station.id } : {}),
    name: station?.name ?? '',
    description: station?.description ?? '',
    tool: station?.tool_id ? String(station.tool_id) : '',
    enabled: station?.enabled ?? true,
  });

  const save = (): void => {
    setSaved(null);
    void form.submit(stationForm, async (input) => {
      if (input.id === undefined) {
        const result = await serverCall('admin.stations.create', {
          name: input.name,
          description: input.description,
          tool: input.tool,
        });
        putStation(result.station);
        onSaved(result.station, result.key);
      } else {
        const result = await serverCall('admin.stations.update', {
          ...input,
          id: input.id,
          ...(loaded.current ? { loaded: loaded.current } : {}),
        });
        loaded.current = result.station;
        putStation(result.station);
        setSaved(`Saved ${result.station.name}.`);
        onSaved(result.station);
      }
    });
  };

  const renew = (): void => {
    if (!station) return;
    setBusy(true);
    setError(null);
    serverCall('admin.stations.newKey', { id: station.id })
      .then((result) => {
        putStation(result.station);
        onSaved(result.station, result.key);
      })
      .catch((err: unknown) => {
        const bridgeError = useServerStore.getState().failed(toBridgeError(err));
        if (bridgeError.code !== 'unauthenticated') setError(errorText(bridgeError));
      })
      .finally(() => {
        setBusy(false);
        setRenewing(false);
      });
  };

  return (
    <EditorPanel
      title={station ? `Edit ${station.name}` : 'New station'}
      busy={form.busy || busy}
      onSave={save}
      onClose={onClose}
      saved={saved}
      saveLabel={station ? 'Save' : 'Register and show its key'}
    >
      <TextInput form={form} field="name" label="Name" />
      <TextInput form={form} field="description" label="Description" />
      <SelectInput
        form={form}
        field="tool"
        label="Tool it runs"
        options={[
          { value: '', label: 'None' },
          ...tools.map((t) => ({ value: String(t.id), label: t.name })),
        ]}
      />
      {station && <Toggle form={form} field="enabled" label="Enabled (may sync)" />}
      {station && (
        <div className="actions">
          <button type="button" className="secondary" onClick={() => setRenewing(true)}>
            New key…
          </button>
        </div>
      )}
      <ErrorMessage message={form.formError ?? error} />
      <ConfirmDialog
        open={renewing}
        title="Make a new key?"
        confirmLabel="Make a new key"
        busy={busy}
        onConfirm={renew}
        onCancel={() => setRenewing(false)}
      >
        <p>
          The station stops syncing until its settings get the new key. The first Labstation to use
          the new key holds it; any other that has the old one is refused.
        </p>
      </ConfirmDialog>
    </EditorPanel>
  );
}
