// Reading one answer source (run_data, pre_run_data or a reservation's question_data) for the
// fields of the conventions, in either answer shape: canonical ({name: value}, groups as lists)
// or NEMO's stored one ({name: {...definition, "user_input": value}}, groups keyed "0", "1",
// ... with gaps possible). Every cause of rule 4 is told apart, naming the field and the rule.

import { consentValue, readConsent } from './consent.js';
import type { AttemptReason, Sample } from './types.js';

export interface SourceFields {
  experiment_title: string;
  experiment_purpose: string;
  project_id: string;
  samples: Sample[];
  data_consent: string;
}

export type SourceRead =
  { ok: true; fields: SourceFields } | { ok: false; reason: AttemptReason; detail: string };

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const hasOwn = (object: Json, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(object, key);

const MISSING = Symbol('missing');

/**
 * The answer under `name`: NEMO's wrapper gives its user_input, and a wrapper without one is
 * an unanswered question. A blank text answer counts as missing too.
 */
function answer(object: Json, name: string): unknown {
  if (!hasOwn(object, name)) return MISSING;
  let value = object[name];
  if (isObject(value) && (hasOwn(value, 'user_input') || hasOwn(value, 'type'))) {
    value = hasOwn(value, 'user_input') ? value.user_input : MISSING;
  }
  if (value === null || value === undefined) return MISSING;
  if (typeof value === 'string' && value.trim() === '') return MISSING;
  return value;
}

class Refusal extends Error {
  constructor(
    readonly reason: AttemptReason,
    readonly detail: string,
  ) {
    super(detail);
  }
}

function text(object: Json, name: string, at: string, required: boolean): string {
  const value = answer(object, name);
  if (value === MISSING) {
    if (required) throw new Refusal('missing_field', `${at}: missing or blank`);
    return '';
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') {
    throw new Refusal('wrong_type', `${at}: must be text, not ${describe(value)}`);
  }
  return value.trim();
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A group's repetitions: a list, or NEMO's object keyed "0", "1", ... in numeric order. */
function repetitions(value: unknown, at: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.every((key) => /^\d+$/.test(key))) {
      return keys.sort((a, b) => Number(a) - Number(b)).map((key) => value[key]);
    }
  }
  throw new Refusal('wrong_type', `${at}: must be a group of samples, not ${describe(value)}`);
}

/** Element symbols given as one text ("Fe, Ni; Cr"): split at spaces, commas and semicolons. */
export function elementSymbols(text: string): string[] {
  return text.split(/[\s,;]+/).filter(Boolean);
}

function elements(object: Json, at: string): string[] {
  const value = answer(object, 'sample_elements');
  if (value === MISSING) return [];
  if (typeof value === 'string') return elementSymbols(value);
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
    return value.map((item) => item.trim()).filter(Boolean);
  }
  throw new Refusal('wrong_type', `${at}.sample_elements: must be a list of element symbols`);
}

function samples(object: Json): Sample[] {
  const value = answer(object, 'sample_group');
  if (value === MISSING) throw new Refusal('missing_field', 'sample_group: missing');
  const items = repetitions(value, 'sample_group');
  if (items.length === 0) throw new Refusal('missing_field', 'sample_group: no samples');
  return items.map((item, index): Sample => {
    const at = `sample_group[${index}]`;
    if (!isObject(item)) {
      throw new Refusal('wrong_type', `${at}: must be an object, not ${describe(item)}`);
    }
    const kind = text(item, 'sample_or_pid', `${at}.sample_or_pid`, true);
    const sampleOrPid =
      kind.toLowerCase() === 'pid'
        ? 'PID'
        : kind.toLowerCase() === 'sample name'
          ? 'Sample Name'
          : null;
    if (sampleOrPid === null) {
      throw new Refusal(
        'wrong_type',
        `${at}.sample_or_pid: must be 'Sample Name' or 'PID', not ${JSON.stringify(kind)}`,
      );
    }
    return {
      sample_name: text(item, 'sample_name', `${at}.sample_name`, true),
      sample_or_pid: sampleOrPid,
      sample_details: text(item, 'sample_details', `${at}.sample_details`, false),
      sample_elements: elements(item, at),
    };
  });
}

function consent(object: Json): string {
  const given = answer(object, 'data_consent');
  if (given === MISSING) throw new Refusal('consent_missing', 'data_consent: missing');
  // A checkbox with nothing ticked is no consent given, as an answer left out.
  if (Array.isArray(given) && given.length === 0) {
    throw new Refusal('consent_missing', 'data_consent: nothing ticked');
  }
  const value = consentValue(given);
  if (value === undefined) {
    throw new Refusal(
      'wrong_type',
      `data_consent: must be a consent word (or a checkbox's one choice), not ${describe(given)}`,
    );
  }
  const word = typeof value === 'boolean' ? String(value) : value.trim();
  const read = readConsent(value);
  if (read === 'declined')
    throw new Refusal('consent_declined', `data_consent: declined (${word})`);
  if (read === 'unrecognized') {
    throw new Refusal(
      'consent_unrecognized',
      `data_consent: ${JSON.stringify(word)} is neither affirmative (Agree, Yes, True, ` +
        'Affirmative) nor declined (Disagree, No, False, Negative)',
    );
  }
  return word;
}

/** Reads one source's JSON text; never throws. */
export function readSource(raw: string | null | undefined): SourceRead {
  if (raw === null || raw === undefined || raw.trim() === '') {
    return { ok: false, reason: 'empty', detail: 'empty' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return {
      ok: false,
      reason: 'malformed_json',
      detail: `malformed JSON: ${(error as Error).message}`,
    };
  }
  if (!isObject(parsed)) {
    return {
      ok: false,
      reason: 'not_an_object',
      detail: `must be a JSON object, not ${describe(parsed)}`,
    };
  }
  try {
    const dataConsent = consent(parsed);
    return {
      ok: true,
      fields: {
        data_consent: dataConsent,
        experiment_title: text(parsed, 'experiment_title', 'experiment_title', true),
        experiment_purpose: text(parsed, 'experiment_purpose', 'experiment_purpose', true),
        project_id: text(parsed, 'project_id', 'project_id', true),
        samples: samples(parsed),
      },
    };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.reason, detail: error.detail };
    throw error;
  }
}
