import { useRef, useState } from 'react';
import type { ReactElement } from 'react';
import {
  scheduleCreate,
  schedulePatch,
  type ScheduleOut,
} from '../../../../shared/harvest/management.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { formatDateTime } from '../../format.js';
import { EditorPanel, ListPanel, useSelection } from '../admin/layout.js';
import { serverCall } from '../serverBridge.js';
import { DeleteRecord } from './DeleteRecord.js';
import { deploymentCell, deploysWhen } from './deployment.js';
import { CheckControl, idText, SelectControl, TextControl } from './formFields.js';
import { ScheduleRuns } from './ScheduleRuns.js';
import { useHarvestAdminStore } from './store.js';
import { useResourceForm } from './useResourceForm.js';

/** The time zones this browser knows, offered beside the time zone field. */
function timeZones(): string[] {
  try {
    return Intl.supportedValuesOf('timeZone');
  } catch {
    return [];
  }
}

/** Schedules: when each instrument's station harvests, and what its runs did. */
export function SchedulesAdmin(): ReactElement {
  const schedules = useHarvestAdminStore((s) => s.schedules);
  const instruments = useHarvestAdminStore((s) => s.instruments);
  const { selected, current, notice, select, saved } = useSelection(schedules);
  const [deleted, setDeleted] = useState<string | null>(null);
  const instrumentName = (id: number): string =>
    instruments.find((i) => i.id === id)?.name ?? `instrument ${id}`;
  return (
    <div className="admin-stack">
      {deleted && (
        <p className="notice" role="status">
          {deleted}
        </p>
      )}
      <div className="admin-layout">
        <ListPanel
          title="Schedules"
          newLabel="New schedule"
          onNew={() => select('new')}
          headers={['Instrument', 'Cron', 'Time zone', 'Enabled', 'Deployment', 'Next run']}
          rows={schedules.map((s) => ({
            id: s.id,
            label: `${instrumentName(s.instrument_id)} (#${s.id})`,
            cells: [
              s.cron,
              s.timezone ?? 'station’s',
              s.enabled ? 'yes' : 'no',
              deploymentCell(s.deployment),
              formatDateTime(s.deployment.next_run_at),
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
            <ScheduleEditor
              key={current?.id ?? 'new'}
              schedule={current}
              notice={notice}
              onSaved={saved}
              onDeleted={(message) => {
                select(null);
                setDeleted(message);
              }}
              onClose={() => select(null)}
            />
            {/* Its own per schedule: the answer of one triggered is not shown under another.
                (A key of its own kind: the editor beside it is keyed by the bare id.) */}
            {current && <ScheduleRuns key={`runs-${current.id}`} schedule={current} />}
          </div>
        )}
      </div>
    </div>
  );
}

function ScheduleEditor({
  schedule,
  notice,
  onSaved,
  onDeleted,
  onClose,
}: {
  schedule: ScheduleOut | undefined;
  notice: string | null;
  onSaved: (schedule: ScheduleOut, message: string) => void;
  onDeleted: (message: string) => void;
  onClose: () => void;
}): ReactElement {
  const instruments = useHarvestAdminStore((s) => s.instruments);
  const put = useHarvestAdminStore((s) => s.put);
  const drop = useHarvestAdminStore((s) => s.drop);
  // The record as this editor loaded it (or last saved it): a save refused if another admin
  // changed it meanwhile.
  const loaded = useRef(schedule);
  const [zones] = useState(timeZones);
  const form = useResourceForm({
    instrument_id: idText(schedule?.instrument_id),
    cron: schedule?.cron ?? '',
    timezone: schedule?.timezone ?? '',
    enabled: schedule?.enabled ?? true,
  });
  const v = form.values;
  const input = {
    instrument_id: v.instrument_id === '' ? undefined : Number(v.instrument_id),
    cron: v.cron,
    timezone: v.timezone.trim() === '' ? null : v.timezone.trim(),
    enabled: v.enabled,
  };
  const zonesId = `${form.id('timezone')}-zones`;

  const save = (): void => {
    if (schedule) {
      void form.submit(schedulePatch, input, async (parsed) => {
        const { item } = await serverCall('admin.schedules.update', {
          ...parsed,
          id: schedule.id,
          loaded: loaded.current,
        });
        loaded.current = item;
        put('schedules', item);
        onSaved(item, `Saved; ${deploysWhen(item)}`);
      });
    } else {
      void form.submit(scheduleCreate, input, async (parsed) => {
        const { item } = await serverCall('admin.schedules.create', parsed);
        put('schedules', item);
        onSaved(item, `Created; ${deploysWhen(item)}`);
      });
    }
  };

  const remove = (): void => {
    if (!schedule) return;
    void form.run(async () => {
      await serverCall('admin.schedules.delete', { id: schedule.id });
      drop('schedules', schedule.id);
      onDeleted(`Deleted schedule #${schedule.id}.`);
    });
  };

  return (
    <EditorPanel
      title={schedule ? `Edit schedule #${schedule.id}` : 'New schedule'}
      busy={form.busy}
      onSave={save}
      onClose={onClose}
      saved={notice}
    >
      <SelectControl
        form={form}
        path="instrument_id"
        label="Instrument"
        value={v.instrument_id}
        onChange={(value) => form.set('instrument_id', value)}
        options={[
          { value: '', label: 'Choose an instrument…' },
          ...instruments.map((i) => ({ value: String(i.id), label: i.name })),
        ]}
      />
      <TextControl
        form={form}
        path="cron"
        label="Cron"
        hint="minute hour day-of-month month day-of-week, e.g. 0 */2 * * * (every two hours)."
        code
        value={v.cron}
        onChange={(value) => form.set('cron', value)}
      />
      <TextControl
        form={form}
        path="timezone"
        label="Time zone"
        hint="An IANA name such as Europe/Zurich; empty: the station's own."
        list={zonesId}
        value={v.timezone}
        onChange={(value) => form.set('timezone', value)}
      />
      <datalist id={zonesId}>
        {zones.map((zone) => (
          <option key={zone} value={zone} />
        ))}
      </datalist>
      <CheckControl
        form={form}
        path="enabled"
        label="Enabled (runs on its times)"
        checked={v.enabled}
        onChange={(checked) => form.set('enabled', checked)}
      />
      {schedule && (
        <div className="actions">
          <DeleteRecord what={`schedule #${schedule.id}`} busy={form.busy} onDelete={remove}>
            <p>The station removes its deployment; the runs so far stay in the history.</p>
          </DeleteRecord>
        </div>
      )}
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
