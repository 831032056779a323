import { useRef, useState } from 'react';
import type { ReactElement } from 'react';
import {
  HOOK_KIND_GUIDE,
  HOOK_KINDS,
  isHookKind,
  triggerOf,
} from '../../../../shared/harvest/hookKinds.js';
import { hookCreate, hookPatch, type HookOut } from '../../../../shared/harvest/management.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { EditorPanel, ListPanel, useSelection } from '../admin/layout.js';
import { serverCall } from '../serverBridge.js';
import { DeleteRecord } from './DeleteRecord.js';
import {
  CheckControl,
  idOrNull,
  idText,
  numberOrText,
  SelectControl,
  TextControl,
} from './formFields.js';
import { useHarvestAdminStore } from './store.js';
import { useResourceForm, type PlacedProblem } from './useResourceForm.js';

const TRIGGER_WORDS = {
  pre_transfer: 'Before the transfer (may skip or redirect the file)',
  post_transfer: 'After the transfer (adds metadata)',
} as const;
type Trigger = keyof typeof TRIGGER_WORDS;

const pretty = (value: unknown): string => JSON.stringify(value, null, 2);

/** The config text as an object, or why it is not one. */
function parseConfig(text: string): { config?: Record<string, unknown>; problem?: string } {
  if (text.trim() === '') return { config: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { problem: 'must be a JSON object, like {"suffixes": [".json"]}' };
    }
    return { config: value as Record<string, unknown> };
  } catch (error) {
    return { problem: `is not valid JSON: ${(error as Error).message}` };
  }
}

/** Hooks: what the stations do before and after each transfer. */
export function HooksAdmin(): ReactElement {
  const hooks = useHarvestAdminStore((s) => s.hooks);
  const instruments = useHarvestAdminStore((s) => s.instruments);
  const { selected, current, notice, select, saved } = useSelection(hooks);
  const [deleted, setDeleted] = useState<string | null>(null);
  const instrumentName = (id: number | null): string =>
    id === null ? 'all' : (instruments.find((i) => i.id === id)?.name ?? `#${id}`);
  return (
    <div className="admin-stack">
      {deleted && (
        <p className="notice" role="status">
          {deleted}
        </p>
      )}
      <div className="admin-layout">
        <ListPanel
          title="Hooks"
          newLabel="New hook"
          onNew={() => select('new')}
          headers={['Name', 'Kind', 'When', 'Priority', 'Instrument', 'Enabled']}
          rows={hooks.map((h) => ({
            id: h.id,
            label: h.name,
            cells: [
              h.kind,
              h.trigger === 'pre_transfer' ? 'before' : 'after',
              String(h.priority),
              instrumentName(h.instrument_id),
              h.enabled ? 'yes' : 'no',
            ],
          }))}
          selected={selected}
          onSelect={(id) => {
            setDeleted(null);
            select(id);
          }}
        />
        {selected !== null && (
          <HookEditor
            key={current?.id ?? 'new'}
            hook={current}
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

function HookEditor({
  hook,
  notice,
  onSaved,
  onDeleted,
  onClose,
}: {
  hook: HookOut | undefined;
  notice: string | null;
  onSaved: (hook: HookOut, message: string) => void;
  onDeleted: (message: string) => void;
  onClose: () => void;
}): ReactElement {
  const instruments = useHarvestAdminStore((s) => s.instruments);
  const put = useHarvestAdminStore((s) => s.put);
  const drop = useHarvestAdminStore((s) => s.drop);
  // The record as this editor loaded it (or last saved it): a save refused if another admin
  // changed it meanwhile.
  const loaded = useRef(hook);
  const form = useResourceForm({
    name: hook?.name ?? '',
    kind: hook?.kind ?? 'file_info',
    trigger: hook?.trigger ?? 'post_transfer',
    config: pretty(hook?.config ?? {}),
    priority: String(hook?.priority ?? 100),
    instrument_id: idText(hook?.instrument_id),
    enabled: hook?.enabled ?? true,
  });
  const v = form.values;
  const parsedConfig = parseConfig(v.config);
  const input = {
    name: v.name,
    kind: v.kind,
    trigger: v.trigger,
    config: parsedConfig.config ?? {},
    priority: numberOrText(v.priority),
    instrument_id: idOrNull(v.instrument_id),
    enabled: v.enabled,
  };
  const configProblems: PlacedProblem[] = parsedConfig.problem
    ? [{ path: ['config'], message: parsedConfig.problem }]
    : [];
  const guide = isHookKind(v.kind) ? HOOK_KIND_GUIDE[v.kind] : null;

  const chooseKind = (kind: string): void => {
    form.set('kind', kind);
    // Each kind runs at one moment: follow it, so the pair is always one the station runs.
    if (isHookKind(kind)) form.set('trigger', triggerOf(kind));
  };

  const save = (): void => {
    if (hook) {
      void form.submit(
        hookPatch,
        input,
        async (parsed) => {
          const { item } = await serverCall('admin.hooks.update', {
            ...parsed,
            id: hook.id,
            loaded: loaded.current,
          });
          loaded.current = item;
          put('hooks', item);
          onSaved(item, `Saved ${item.name}.`);
        },
        configProblems,
      );
    } else {
      void form.submit(
        hookCreate,
        input,
        async (parsed) => {
          const { item } = await serverCall('admin.hooks.create', parsed);
          put('hooks', item);
          onSaved(item, `Created ${item.name}.`);
        },
        configProblems,
      );
    }
  };

  const remove = (): void => {
    if (!hook) return;
    void form.run(async () => {
      await serverCall('admin.hooks.delete', { id: hook.id });
      drop('hooks', hook.id);
      onDeleted(`Deleted hook ${hook.name}.`);
    });
  };

  return (
    <EditorPanel
      title={hook ? `Edit ${hook.name}` : 'New hook'}
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
          path="kind"
          label="Kind"
          hint={guide?.does}
          value={v.kind}
          onChange={chooseKind}
          options={HOOK_KINDS.map((kind) => ({ value: kind, label: kind }))}
        />
        <SelectControl
          form={form}
          path="trigger"
          label="Runs"
          value={v.trigger}
          onChange={(value) => form.set('trigger', value as Trigger)}
          options={Object.entries(TRIGGER_WORDS).map(([value, label]) => ({ value, label }))}
        />
        <TextControl
          form={form}
          path="priority"
          label="Priority"
          hint="Lower runs first (then by name)."
          value={v.priority}
          onChange={(value) => form.set('priority', value)}
        />
        <SelectControl
          form={form}
          path="instrument_id"
          label="Instrument"
          value={v.instrument_id}
          onChange={(value) => form.set('instrument_id', value)}
          options={[
            { value: '', label: 'All instruments' },
            ...instruments.map((i) => ({ value: String(i.id), label: i.name })),
          ]}
        />
      </div>
      <TextControl
        form={form}
        path="config"
        label="Config (JSON)"
        hint={guide ? `For example: ${JSON.stringify(guide.example)}` : undefined}
        code
        rows={6}
        value={v.config}
        onChange={(value) => form.set('config', value)}
      />
      {guide && (
        <div className="actions">
          <button
            type="button"
            className="secondary"
            onClick={() => form.set('config', pretty(guide.example))}
          >
            Use the example config
          </button>
        </div>
      )}
      <CheckControl
        form={form}
        path="enabled"
        label="Enabled"
        checked={v.enabled}
        onChange={(checked) => form.set('enabled', checked)}
      />
      {hook && (
        <div className="actions">
          <DeleteRecord what={`hook ${hook.name}`} busy={form.busy} onDelete={remove}>
            <p>The stations stop running it with their next sync.</p>
          </DeleteRecord>
        </div>
      )}
      <ErrorMessage message={form.formError} />
    </EditorPanel>
  );
}
