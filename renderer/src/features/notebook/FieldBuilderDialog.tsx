import { useEffect, useRef, useState } from 'react';
import type { FormEvent, ReactElement, ReactNode } from 'react';
import { FIELD_TYPES } from '../../../../shared/metadata/index.js';
import type { FieldDraft, FieldGroup, FieldType } from '../../../../shared/metadata/index.js';
import {
  EMPTY_BUILDER_FORM,
  defaultUnit,
  defaultValueInput,
  draftFromForm,
  hasMultiValues,
  hasOpenInCurrentTab,
  hasOptions,
  hasUnits,
} from './builderRules.js';
import type { BuilderForm } from './builderRules.js';
import { TYPE_LABELS, parseList } from './words.js';
import { RequiredStar } from '../forms/Title.js';

interface FieldBuilderDialogProps {
  open: boolean;
  groups: FieldGroup[];
  /** Adds the field; returns the problems that refused it ([] when added). */
  onAdd: (name: string, draft: FieldDraft) => string[];
  onClose: () => void;
}

const NAME_NEEDED = 'The field needs a name.';

/** The builder's control of each property a refusal may name (`extra_fields."x".options: …`). */
const CONTROL_OF: Record<string, string> = {
  options: 'builder-options',
  units: 'builder-units',
  unit: 'builder-unit',
  value: 'builder-value',
  position: 'builder-position',
  group_id: 'builder-group',
};

/** The ids of the controls the problems name, in the problems' order. */
function controlsNamed(problems: string[]): string[] {
  const ids = problems.flatMap((problem) => {
    const property = /\.([a-z_]+)(?:\[\d+\])?:/.exec(problem)?.[1];
    const id = property === undefined ? undefined : CONTROL_OF[property];
    return id === undefined ? [] : [id];
  });
  return [...new Set(ids)];
}

/** A control's invalid state and the problems' list describing it, when a problem names it. */
function invalidProps(
  id: string,
  named: string[],
): { 'aria-invalid'?: true; 'aria-describedby'?: string } {
  return named.includes(id) ? { 'aria-invalid': true, 'aria-describedby': 'builder-problems' } : {};
}

function Row({
  id,
  label,
  required = false,
  children,
}: {
  id: string;
  label: string;
  required?: boolean;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {required && <RequiredStar />}
      </label>
      {children}
    </div>
  );
}

function Flag({
  label,
  checked,
  onChange,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
}): ReactElement {
  return (
    <label className="choice">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <span>{label}</span>
    </label>
  );
}

function DefaultValue({
  form,
  set,
  named,
}: {
  form: BuilderForm;
  set: (changes: Partial<BuilderForm>) => void;
  /** The controls a refusal named (controlsNamed). */
  named: string[];
}): ReactElement {
  if (form.type === 'checkbox') {
    return (
      <Flag
        label="Checked by default"
        checked={form.value === 'true'}
        onChange={(checked) => set({ value: checked ? 'true' : '' })}
      />
    );
  }
  if (hasOptions(form.type)) {
    return (
      <Row id="builder-value" label="Default value">
        <select
          id="builder-value"
          {...invalidProps('builder-value', named)}
          value={form.value}
          onChange={(e) => set({ value: e.target.value })}
        >
          <option value="">(none)</option>
          {parseList(form.options).map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      </Row>
    );
  }
  return (
    <Row id="builder-value" label="Default value">
      <input
        id="builder-value"
        {...invalidProps('builder-value', named)}
        type={defaultValueInput(form.type)}
        step={form.type === 'number' ? 'any' : undefined}
        value={form.value}
        onChange={(e) => set({ value: e.target.value })}
      />
    </Row>
  );
}

/**
 * The field builder (spec 001 rule 1) on a modal <dialog>: Escape closes it, focus stays in it.
 * It offers only the properties that apply to the chosen type.
 */
export function FieldBuilderDialog(props: FieldBuilderDialogProps): ReactElement {
  const { open, groups, onAdd, onClose } = props;
  const ref = useRef<HTMLDialogElement>(null);
  const nameRef = useRef<HTMLInputElement>(null);
  const [form, setForm] = useState<BuilderForm>(EMPTY_BUILDER_FORM);
  const [problems, setProblems] = useState<string[]>([]);
  const set = (changes: Partial<BuilderForm>): void => setForm((f) => ({ ...f, ...changes }));

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      setForm(EMPTY_BUILDER_FORM);
      setProblems([]);
      dialog.showModal();
      nameRef.current?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);

  const submit = (e: FormEvent): void => {
    e.preventDefault();
    if (form.name.trim() === '') {
      setProblems([NAME_NEEDED]);
      nameRef.current?.focus();
      return;
    }
    const refused = onAdd(form.name.trim(), draftFromForm(form));
    setProblems(refused);
    // The first control a problem names takes the focus, as the name does when it is missing.
    const [first] = controlsNamed(refused);
    if (first !== undefined) document.getElementById(first)?.focus();
  };
  const named = controlsNamed(problems);

  const units = parseList(form.units);
  return (
    <dialog
      ref={ref}
      className="dialog builder-dialog"
      aria-labelledby="builder-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <form onSubmit={submit} noValidate>
        <h2 id="builder-title">Add field</h2>
        <Row id="builder-type" label="Field type">
          <select
            id="builder-type"
            value={form.type}
            onChange={(e) => set({ type: e.target.value as FieldType, value: '' })}
          >
            {FIELD_TYPES.map((type) => (
              <option key={type} value={type}>
                {TYPE_LABELS[type]}
              </option>
            ))}
          </select>
        </Row>
        <Row id="builder-name" label="Field name" required>
          <input
            ref={nameRef}
            id="builder-name"
            type="text"
            aria-required
            aria-invalid={problems.includes(NAME_NEEDED) || undefined}
            aria-describedby={problems.includes(NAME_NEEDED) ? 'builder-problems' : undefined}
            value={form.name}
            onChange={(e) => set({ name: e.target.value })}
          />
        </Row>
        <Row id="builder-description" label="Description">
          <input
            id="builder-description"
            type="text"
            value={form.description}
            onChange={(e) => set({ description: e.target.value })}
          />
        </Row>
        {hasOptions(form.type) && (
          <Row id="builder-options" label="Options (one per line, at least 2)">
            <textarea
              id="builder-options"
              {...invalidProps('builder-options', named)}
              rows={3}
              value={form.options}
              onChange={(e) => set({ options: e.target.value })}
            />
          </Row>
        )}
        {hasUnits(form.type) && (
          <>
            <Row id="builder-units" label="Units (one per line)">
              <textarea
                id="builder-units"
                {...invalidProps('builder-units', named)}
                rows={2}
                value={form.units}
                onChange={(e) => set({ units: e.target.value })}
              />
            </Row>
            {units.length > 0 && (
              <Row id="builder-unit" label="Default unit">
                <select
                  id="builder-unit"
                  {...invalidProps('builder-unit', named)}
                  value={defaultUnit(units, form.unit)}
                  onChange={(e) => set({ unit: e.target.value })}
                >
                  <option value="">(none)</option>
                  {units.map((unit) => (
                    <option key={unit} value={unit}>
                      {unit}
                    </option>
                  ))}
                </select>
              </Row>
            )}
          </>
        )}
        {!(hasMultiValues(form.type) && form.allow_multi_values) && (
          <DefaultValue form={form} set={set} named={named} />
        )}
        <div className="field-grid">
          <Row id="builder-group" label="Group">
            <select
              id="builder-group"
              {...invalidProps('builder-group', named)}
              value={form.group}
              onChange={(e) => set({ group: e.target.value })}
            >
              <option value="">(no group)</option>
              {groups.map((group) => (
                <option key={group.id} value={String(group.id)}>
                  {group.name}
                </option>
              ))}
            </select>
          </Row>
          <Row id="builder-position" label="Position">
            <input
              id="builder-position"
              {...invalidProps('builder-position', named)}
              type="number"
              step="any"
              value={form.position}
              onChange={(e) => set({ position: e.target.value })}
            />
          </Row>
        </div>
        <fieldset className="flags">
          <legend>Options of the field</legend>
          <Flag
            label="Required"
            checked={form.required}
            onChange={(required) => set({ required })}
          />
          <Flag
            label="Blank value on duplicate"
            checked={form.blank_value_on_duplicate}
            onChange={(blank_value_on_duplicate) => set({ blank_value_on_duplicate })}
          />
          {hasMultiValues(form.type) && (
            <Flag
              label="Allow several values"
              checked={form.allow_multi_values}
              onChange={(allow_multi_values) => set({ allow_multi_values, value: '' })}
            />
          )}
          {hasOpenInCurrentTab(form.type) && (
            <Flag
              label="Open in the current tab"
              checked={form.open_in_current_tab}
              onChange={(open_in_current_tab) => set({ open_in_current_tab })}
            />
          )}
        </fieldset>
        {problems.length > 0 && (
          <ul id="builder-problems" className="messages" role="alert">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        )}
        <div className="actions">
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary">
            Add field
          </button>
        </div>
      </form>
    </dialog>
  );
}
