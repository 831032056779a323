// What the field builder offers for each type, and how its form becomes a FieldDraft. Only the
// properties that apply to the chosen type are offered and sent (spec 001, Field object).

import type { FieldDraft, FieldType } from '../../../../shared/metadata/index.js';
import { listedUnit, numericValue } from '../../../../shared/metadata/index.js';
import { parseList } from './words.js';

export interface BuilderForm {
  name: string;
  type: FieldType;
  description: string;
  /** One per line; a comma is part of its option. */
  options: string;
  units: string;
  unit: string;
  /** Text of the default value; for a checkbox "true" or "". */
  value: string;
  /** '' for no group. */
  group: string;
  position: string;
  required: boolean;
  blank_value_on_duplicate: boolean;
  allow_multi_values: boolean;
  open_in_current_tab: boolean;
}

export const EMPTY_BUILDER_FORM: BuilderForm = {
  name: '',
  type: 'text',
  description: '',
  options: '',
  units: '',
  unit: '',
  value: '',
  group: '',
  position: '',
  required: false,
  blank_value_on_duplicate: false,
  allow_multi_values: false,
  open_in_current_tab: false,
};

export function hasOptions(type: FieldType): boolean {
  return type === 'select' || type === 'radio';
}

export function hasUnits(type: FieldType): boolean {
  return type === 'number';
}

export function hasMultiValues(type: FieldType): boolean {
  return type === 'select';
}

export function hasOpenInCurrentTab(type: FieldType): boolean {
  return type === 'url';
}

/** The browser input for a default value of this type (choices and checkboxes have their own). */
export function defaultValueInput(type: FieldType): string {
  switch (type) {
    case 'date':
    case 'datetime-local':
    case 'email':
    case 'number':
    case 'time':
    case 'url':
      return type;
    default:
      return 'text';
  }
}

/**
 * The default unit as the builder's dropdown shows it and the draft gets it: the listed unit the
 * one chosen is (listedUnit), so a choice made before the units were edited into the other
 * Unicode form ("µm" to "μm") stays chosen; '' when it is none of them.
 */
export function defaultUnit(units: readonly string[], chosen: string): string {
  return chosen === '' ? '' : (listedUnit(units, chosen) ?? '');
}

function defaultValue(form: BuilderForm): FieldDraft['value'] {
  if (form.type === 'checkbox') return form.value === 'true';
  if (form.type === 'select' && form.allow_multi_values) {
    return form.value === '' ? [] : [form.value];
  }
  return form.value;
}

/** The draft addField receives: properties of other types are left out. */
export function draftFromForm(form: BuilderForm): FieldDraft {
  const draft: FieldDraft = { type: form.type, value: defaultValue(form) };
  if (form.description.trim() !== '') draft.description = form.description.trim();
  if (hasOptions(form.type)) draft.options = parseList(form.options);
  if (hasMultiValues(form.type) && form.allow_multi_values) draft.allow_multi_values = true;
  if (hasUnits(form.type)) {
    const units = parseList(form.units);
    if (units.length > 0) draft.units = units;
    const unit = defaultUnit(units, form.unit);
    if (unit !== '') draft.unit = unit;
  }
  if (hasOpenInCurrentTab(form.type) && form.open_in_current_tab) draft.open_in_current_tab = true;
  const position = numericValue(form.position);
  if (position !== null) draft.position = position;
  const group = numericValue(form.group);
  if (group !== null) draft.group_id = group;
  if (form.required) draft.required = true;
  if (form.blank_value_on_duplicate) draft.blank_value_on_duplicate = true;
  return draft;
}
