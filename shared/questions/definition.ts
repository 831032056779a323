// Reading the properties of one question definition: names and JSON types, per-type rules,
// defaults. Problems are collected, never thrown; checks across questions (names, formula
// references, cycles) are in parse.ts.

import { decimalPlaces } from './decimal.js';
import { compileHtmlPattern } from './pattern.js';
import { isFiniteNumber, isPlainObject, isStringArray, listInWords, quote } from './json.js';
import type { JsonObject } from './json.js';
import { parseFormulaCached } from './formula.js';
import { describeJsonType } from './definition-context.js';
import type { ProblemList, QuestionContext } from './definition-context.js';
import {
  PROPERTY_ORDER,
  REPORT_PROBLEM_OPTIONS,
  allowedProperties,
  isAllowedProperty,
} from './properties.js';
import { REPORT_PROBLEM_CHOICES, TEXTAREA_DEFAULT_ROWS } from './types.js';
import type { QuestionType } from './types.js';

export const MAX_PRECISION = 20;

/** Reads the properties of one question that has a known type; returns the canonical copy. */
export class DefinitionReader {
  private readonly out: JsonObject;

  constructor(
    private readonly raw: JsonObject,
    private readonly type: QuestionType,
    name: string,
    private readonly context: QuestionContext,
    private readonly problems: ProblemList,
    private readonly options: { stored?: boolean } = {},
  ) {
    this.out = { type, name };
  }

  private problem(property: string | null, message: string): void {
    this.problems.add(this.context, property, message);
  }

  private has(property: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.raw, property);
  }

  private get(property: string): unknown {
    return this.has(property) ? this.raw[property] : undefined;
  }

  private wrongType(property: string, expected: string): void {
    this.problem(
      property,
      `property ${quote(property)} must be ${expected}, not ${describeJsonType(this.get(property))}`,
    );
  }

  checkUnknownProperties(): void {
    for (const property of Object.keys(this.raw)) {
      if (isAllowedProperty(this.type, property)) continue;
      let hint = '';
      if (property === 'consumable')
        hint = '; only number and number_float questions can charge a consumable';
      else if (property === 'consumable_id')
        hint = `; name the consumable with "consumable" (NEMO's ids are not this facility's)`;
      this.problem(
        property,
        `unknown property ${quote(property)} for a ${this.type} question (allowed: ${allowedProperties(this.type).join(', ')})${hint}`,
      );
    }
  }

  string(property: string, options: { nonEmpty?: boolean } = {}): string | undefined {
    if (!this.has(property)) return undefined;
    const value = this.get(property);
    if (typeof value !== 'string') {
      this.wrongType(property, 'text');
      return undefined;
    }
    if (options.nonEmpty && value.trim() === '') {
      this.problem(property, `property ${quote(property)} is empty`);
      return undefined;
    }
    this.out[property] = value;
    return value;
  }

  boolean(property: string): void {
    if (!this.has(property)) return;
    const value = this.get(property);
    if (typeof value !== 'boolean') this.wrongType(property, 'true or false');
    else this.out[property] = value;
  }

  number(
    property: string,
    rule: { integer?: boolean; min?: number; max?: number; positive?: boolean } = {},
  ): number | undefined {
    if (!this.has(property)) return undefined;
    const value = this.get(property);
    if (!isFiniteNumber(value)) {
      this.wrongType(property, rule.integer ? 'a whole number' : 'a number');
      return undefined;
    }
    if (rule.integer && !Number.isInteger(value)) {
      this.problem(property, `property ${quote(property)} must be a whole number, not ${value}`);
      return undefined;
    }
    if (rule.positive && value <= 0) {
      this.problem(property, `property ${quote(property)} must be greater than 0, not ${value}`);
      return undefined;
    }
    if (rule.min !== undefined && value < rule.min) {
      this.problem(
        property,
        `property ${quote(property)} must be at least ${rule.min}, not ${value}`,
      );
      return undefined;
    }
    if (rule.max !== undefined && value > rule.max) {
      this.problem(
        property,
        `property ${quote(property)} must be at most ${rule.max}, not ${value}`,
      );
      return undefined;
    }
    this.out[property] = value === 0 ? 0 : value; // -0 would not survive JSON
    return value;
  }

  common(): void {
    this.string('title');
    this.string('title_html');
    this.boolean('required');
    this.string('help');
    this.number('max-width', { positive: true });
    this.number('form_row', { integer: true, min: 0 });
    this.number('row_cell', { integer: true, min: 0 });
  }

  /** choices, labels and default_value of radio, checkbox and dropdown. */
  choices(): void {
    let choices: string[] | undefined;
    if (!this.has('choices')) {
      this.problem(
        'choices',
        `property "choices" is missing; a ${this.type} question needs at least one choice`,
      );
    } else if (!isStringArray(this.get('choices'))) {
      this.wrongType('choices', 'a list of texts');
    } else {
      const list = this.get('choices') as string[];
      if (list.length === 0) {
        this.problem('choices', 'property "choices" is empty; give at least one choice');
      } else {
        choices = list.slice();
        const seen = new Set<string>();
        const duplicates = new Set<string>();
        list.forEach((choice, index) => {
          if (choice.trim() === '') {
            this.problem('choices', `choice ${index + 1} in property "choices" is empty`);
          }
          if (seen.has(choice)) duplicates.add(choice);
          seen.add(choice);
        });
        if (duplicates.size > 0) {
          this.problem(
            'choices',
            `property "choices" lists ${listInWords([...duplicates].map(quote))} more than once`,
          );
        }
        this.out['choices'] = choices;
      }
    }
    this.labels(choices);
    this.defaultValue(choices);
    if (this.type !== 'dropdown') this.boolean('inline');
  }

  private labels(choices: string[] | undefined): void {
    if (!this.has('labels')) {
      if (choices) this.out['labels'] = choices.slice();
      return;
    }
    const labels = this.get('labels');
    if (isPlainObject(labels)) {
      this.problem(
        'labels',
        `property "labels" is an object (NEMO's option groups), which is not supported here; give one label per choice as a list`,
      );
      return;
    }
    if (!isStringArray(labels)) {
      this.wrongType('labels', 'a list of texts');
      return;
    }
    if (choices && labels.length !== choices.length) {
      this.problem(
        'labels',
        `property "labels" has ${labels.length} label${labels.length === 1 ? '' : 's'} but there ${choices.length === 1 ? 'is 1 choice' : `are ${choices.length} choices`}; give one label per choice`,
      );
      return;
    }
    this.out['labels'] = labels.slice();
  }

  /**
   * default_value, or NEMO's older default_choice where default_value is absent (NEMO reads it
   * so), checked alike and written as default_value; a default_choice beside a default_value
   * is dropped, as NEMO ignores it.
   */
  private defaultValue(choices: string[] | undefined): void {
    const property = this.has('default_value')
      ? 'default_value'
      : this.has('default_choice')
        ? 'default_choice'
        : null;
    if (property !== null) this.defaultFrom(property, choices);
  }

  private defaultFrom(property: string, choices: string[] | undefined): void {
    const value = this.get(property);
    if (this.type === 'checkbox') {
      const list = typeof value === 'string' ? [value] : value;
      if (!isStringArray(list)) {
        this.wrongType(property, 'a list of choices');
        return;
      }
      const unknown = choices ? list.filter((item) => !choices.includes(item)) : [];
      if (unknown.length > 0) {
        this.problem(
          property,
          `property ${quote(property)} has ${listInWords(unknown.map(quote))}, which ${unknown.length === 1 ? 'is not a choice' : 'are not choices'}`,
        );
        return;
      }
      if (new Set(list).size !== list.length) {
        this.problem(property, `property ${quote(property)} lists a choice more than once`);
        return;
      }
      this.out['default_value'] = list.slice();
      return;
    }
    if (typeof value !== 'string') {
      this.wrongType(property, 'text (one of the choices)');
      return;
    }
    if (choices && !choices.includes(value)) {
      this.problem(
        property,
        `property ${quote(property)} is ${quote(value)}, which is not one of the choices`,
      );
      return;
    }
    this.out['default_value'] = value;
  }

  reportProblem(): void {
    if (this.has('choices')) {
      const choices = this.get('choices');
      const fixed =
        isStringArray(choices) &&
        choices.length === REPORT_PROBLEM_CHOICES.length &&
        choices.every((choice, i) => choice === REPORT_PROBLEM_CHOICES[i]);
      if (!fixed) {
        this.problem(
          'choices',
          'property "choices" of a radio_report_problem question is always ["Yes", "No"]; change the shown text with "labels" instead',
        );
      }
    }
    this.out['choices'] = REPORT_PROBLEM_CHOICES.slice();
    if (!this.has('labels')) {
      this.out['labels'] = REPORT_PROBLEM_CHOICES.slice();
    } else {
      const labels = this.get('labels');
      if (!isStringArray(labels)) this.wrongType('labels', 'a list of two texts');
      else if (labels.length !== 2) {
        this.problem(
          'labels',
          `property "labels" needs exactly 2 labels (for Yes and No), not ${labels.length}`,
        );
      } else this.out['labels'] = labels.slice();
    }
    if (!this.has('options')) return;
    const options = this.get('options');
    if (!isPlainObject(options)) {
      this.wrongType('options', 'an object');
      return;
    }
    const copy: JsonObject = {};
    for (const key of Object.keys(options)) {
      const value = options[key];
      const path = `options.${key}`;
      if (!(REPORT_PROBLEM_OPTIONS as readonly string[]).includes(key)) {
        this.problem(
          path,
          `unknown option ${quote(key)} in property "options" (allowed: ${REPORT_PROBLEM_OPTIONS.join(', ')})`,
        );
      } else if (key === 'problem_description' && typeof value !== 'string') {
        this.problem(
          path,
          `option "problem_description" must be text, not ${describeJsonType(value)}`,
        );
      } else if (key !== 'problem_description' && typeof value !== 'boolean') {
        this.problem(
          path,
          `option ${quote(key)} must be true or false, not ${describeJsonType(value)}`,
        );
      } else {
        copy[key] = value;
      }
    }
    const ordered: JsonObject = {};
    for (const key of REPORT_PROBLEM_OPTIONS) if (key in copy) ordered[key] = copy[key];
    this.out['options'] = ordered;
  }

  text(): void {
    this.number('maxlength', { integer: true, min: 0 });
    const pattern = this.string('pattern');
    if (pattern !== undefined) {
      const compiled = compileHtmlPattern(pattern);
      // A list saved while a pattern valid only when wrapped was taken still loads.
      if (!compiled.ok && !(this.options.stored === true && compiled.wrapped)) {
        this.problem(
          'pattern',
          `property "pattern" is not a valid regular expression (${compiled.error})`,
        );
      }
    }
    this.string('placeholder');
    if (this.type === 'textbox') {
      this.string('prefix');
      this.string('suffix');
    } else {
      const rows = this.number('rows', { integer: true, min: 1 });
      if (rows === undefined && !this.has('rows')) this.out['rows'] = TEXTAREA_DEFAULT_ROWS;
      this.boolean('auto_resize');
    }
  }

  numeric(): void {
    const min = this.number('min');
    const max = this.number('max');
    if (min !== undefined && max !== undefined && min > max) {
      this.problem('min', `property "min" (${min}) is greater than property "max" (${max})`);
    }
    // A number question takes whole numbers, a float its precision's places: a step finer
    // than that would lead the arrow keys to values the answer check refuses.
    const step = this.number('step', { positive: true, integer: this.type === 'number' });
    const precision =
      this.type === 'number_float'
        ? this.number('precision', { integer: true, min: 0, max: MAX_PRECISION })
        : undefined;
    if (step !== undefined && precision !== undefined && decimalPlaces(step) > precision) {
      this.problem(
        'step',
        `property "step" (${step}) has more decimal places than property "precision" (${precision}) allows`,
      );
    }
    this.string('consumable', { nonEmpty: true });
    this.string('prefix');
    this.string('suffix');
    this.string('placeholder');
  }

  formula(): void {
    if (!this.has('formula')) {
      this.problem('formula', 'property "formula" is missing');
    } else {
      const formula = this.string('formula', { nonEmpty: true });
      if (formula !== undefined) {
        const parsed = parseFormulaCached(formula);
        if (!parsed.ok) {
          this.problem(
            'formula',
            `property "formula" cannot be read: ${parsed.error} (at character ${parsed.position + 1} of ${quote(formula)})`,
          );
        }
      }
    }
    this.number('precision', { integer: true, min: 0, max: MAX_PRECISION });
    this.string('suffix');
  }

  group(readFields: (fields: unknown[]) => unknown[]): void {
    this.number('max_number', { integer: true, min: 1 });
    this.string('group_add_button_name', { nonEmpty: true });
    if (!this.has('questions')) {
      this.problem(
        'questions',
        'property "questions" is missing; a group needs at least one question',
      );
      return;
    }
    const fields = this.get('questions');
    if (!Array.isArray(fields)) {
      this.wrongType('questions', 'a list of questions');
      return;
    }
    if (fields.length === 0) {
      this.problem(
        'questions',
        'property "questions" is empty; a group needs at least one question',
      );
      return;
    }
    this.out['questions'] = readFields(fields);
  }

  /** The canonical copy, properties in serialization order. */
  result(): JsonObject {
    const ordered: JsonObject = {};
    for (const property of PROPERTY_ORDER) {
      if (property in this.out && this.out[property] !== undefined)
        ordered[property] = this.out[property];
    }
    return ordered;
  }
}
