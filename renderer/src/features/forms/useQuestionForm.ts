import { useCallback, useId, useMemo, useState } from 'react';
import type {
  AnswerGroup,
  AnswerProblem,
  Answers,
  Question,
} from '../../../../shared/questions/index.js';
import {
  initialAnswers,
  normalizeAnswers,
  validateAnswers,
} from '../../../../shared/questions/index.js';
import type { BridgeError } from '../../bridge.js';
import { dropDrafts, readDraft, writeDraft } from './drafts.js';
import type { FieldValue, Path } from './values.js';
import { fieldId, groupItemsAt, pathKey, withGroupItems, withValue } from './values.js';

export interface QuestionForm {
  formId: string;
  questions: Question[];
  values: Answers;
  /** Canonical answers with formula results, for showing computed fields. */
  computed: Answers;
  /** Every broken rule, shown or not yet. */
  problems: AnswerProblem[];
  submitted: boolean;
  setValue: (path: Path, value: FieldValue) => void;
  touch: (path: Path) => void;
  /** A field's onBlur: touch, unless a submit button is being pressed (leftForSubmit). */
  blurred: (path: Path) => void;
  addRepetition: (group: string) => void;
  removeRepetition: (group: string, index: number) => void;
  /** The messages to show at this field now (after touch or submit, and from the core). */
  messagesAt: (path: Path) => string[];
  /**
   * Shows every problem and focuses the first (unless `focus` is false, when something before
   * the questions needs the person first); returns the canonical answers when all rules hold.
   */
  submit: (options?: { focus?: boolean }) => Answers | null;
  /** Puts the core's validation_failed problems at their fields; false for other errors. */
  showServerProblems: (error: BridgeError) => boolean;
  reset: () => void;
}

function isAnswerProblem(value: unknown): value is AnswerProblem {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Partial<AnswerProblem>;
  return Array.isArray(p.path) && typeof p.message === 'string';
}

function serverProblemsOf(error: BridgeError): AnswerProblem[] {
  if (error.code !== 'validation_failed') return [];
  const details = error.details as { problems?: unknown } | undefined;
  return Array.isArray(details?.problems) ? details.problems.filter(isAnswerProblem) : [];
}

/** A new empty repetition of a group, with its fields' defaults. */
function emptyRepetition(question: Question | undefined): AnswerGroup {
  if (question?.type !== 'group') return {};
  // A repetition is keyed like a question list of its own fields, so their defaults apply.
  return initialAnswers(question.questions) as AnswerGroup;
}

/**
 * State of one question form: values as typed, touched fields, live validation. `prefill`
 * (answers in any accepted shape) replaces the defaults, e.g. answers given earlier.
 */
export function useQuestionForm(
  questions: Question[],
  prefill?: unknown,
  /** Keeps the values typed across a tab switch under this key (drafts.ts). */
  draftKey?: string,
): QuestionForm {
  const formId = useId();
  const initial = useCallback(
    () => withMinimumRepetitions(questions, prefill),
    [questions, prefill],
  );
  const [values, setValuesState] = useState<Answers>(
    () => readDraft<Answers>(draftKey) ?? initial(),
  );
  // Kept as a draft only once the person changed something: until then a new prefill (a
  // reservation booked meanwhile) still applies when the form comes back.
  const setValues = (update: (v: Answers) => Answers): void =>
    setValuesState((v) => {
      const next = update(v);
      writeDraft(draftKey, next);
      return next;
    });
  const [touched, setTouched] = useState<ReadonlySet<string>>(() => new Set());
  const [submitted, setSubmitted] = useState(false);
  const [serverProblems, setServerProblems] = useState<AnswerProblem[]>([]);

  const validation = useMemo(() => validateAnswers(questions, values), [questions, values]);
  const problems = useMemo(() => (validation.ok ? [] : validation.problems), [validation]);
  // validateAnswers computes the formulas on the canonical answers.
  const computed = validation.answers;

  const visible = useMemo(() => {
    const byKey = new Map<string, string[]>();
    const add = (p: AnswerProblem): void => {
      const key = pathKey(p.path);
      const list = byKey.get(key) ?? [];
      if (!list.includes(p.message)) list.push(p.message);
      byKey.set(key, list);
    };
    for (const p of problems) if (submitted || touched.has(pathKey(p.path))) add(p);
    for (const p of serverProblems) add(p);
    return byKey;
  }, [problems, serverProblems, submitted, touched]);

  const touch = useCallback((path: Path) => {
    const key = pathKey(path);
    setTouched((t) => (t.has(key) ? t : new Set(t).add(key)));
  }, []);

  const forgetServerProblem = (path: Path): void => {
    const key = pathKey(path);
    setServerProblems((list) => withoutProblemsAt(list, key));
  };

  const setValue = (path: Path, value: FieldValue): void => {
    setValues((v) => withValue(v, path, value));
    forgetServerProblem(path);
  };

  const addRepetition = (group: string): void => {
    const question = questions.find((q) => q.name === group);
    setValues((v) =>
      withGroupItems(v, group, [...groupItemsAt(v, group), emptyRepetition(question)]),
    );
    touch([group]);
    forgetServerProblem([group]);
  };

  const removeRepetition = (group: string, index: number): void => {
    setValues((v) =>
      withGroupItems(
        v,
        group,
        groupItemsAt(v, group).filter((_, i) => i !== index),
      ),
    );
    // Touched marks and problems below the group moved with the repetitions: start afresh.
    setTouched((t) => new Set([...t].filter((k) => !k.startsWith(`${group}.`)).concat(group)));
    forgetServerProblem([group]);
  };

  const submit = (options?: { focus?: boolean }): Answers | null => {
    setSubmitted(true);
    setServerProblems([]);
    if (validation.ok) return validation.answers;
    if (options?.focus !== false) focusFirst(formId, validation.problems);
    return null;
  };

  const showServerProblems = (error: BridgeError): boolean => {
    const list = serverProblemsOf(error);
    if (list.length === 0) return false;
    setServerProblems(list);
    setSubmitted(true);
    focusFirst(formId, list);
    return true;
  };

  const reset = (): void => {
    if (draftKey !== undefined) dropDrafts(draftKey);
    setValuesState(initial());
    setTouched(new Set());
    setSubmitted(false);
    setServerProblems([]);
  };

  return {
    formId,
    questions,
    values,
    computed,
    problems: [...problems, ...serverProblems],
    submitted,
    setValue,
    touch,
    blurred: (path) => {
      if (!leftForSubmit()) touch(path);
    },
    addRepetition,
    removeRepetition,
    messagesAt: (path) => visible.get(pathKey(path)) ?? [],
    submit,
    showServerProblems,
    reset,
  };
}

/**
 * The problems of `list` but those at the field `key` and the fields within it ("g.1" holds
 * "g.1.name"); not those of another field whose name starts the same ("g.1.n", "g.1.name").
 */
export function withoutProblemsAt(list: AnswerProblem[], key: string): AnswerProblem[] {
  return list.filter((p) => {
    const at = pathKey(p.path);
    return at !== key && !at.startsWith(`${key}.`);
  });
}

/** Groups start with one repetition to fill in (NEMO shows one), defaults filled. */
export function withMinimumRepetitions(questions: Question[], prefill?: unknown): Answers {
  let values = initialAnswers(questions);
  if (prefill !== undefined) {
    // Only the answers the prefill gives (a reservation's, by matching names): normalized, an
    // unanswered checkbox is [], which would clear its default_value.
    const given = new Set(
      typeof prefill === 'object' && prefill !== null ? Object.keys(prefill) : [],
    );
    const filled = normalizeAnswers(questions, prefill);
    for (const name of Object.keys(filled)) {
      if (given.has(name)) values = { ...values, [name]: filled[name] };
    }
  }
  for (const q of questions) {
    if (q.type === 'group' && groupItemsAt(values, q.name).length === 0) {
      values = withGroupItems(values, q.name, [emptyRepetition(q)]);
    }
  }
  return values;
}

/** Moves focus to the field of the first problem, after React has shown the messages. */
function focusFirst(formId: string, problems: AnswerProblem[]): void {
  const first = problems[0];
  if (!first) return;
  window.requestAnimationFrame(() => {
    let path = first.path;
    while (path.length > 0) {
      const el = document.getElementById(fieldId(formId, path));
      if (el) {
        el.focus();
        return;
      }
      path = path.slice(0, -1);
    }
  });
}

/**
 * What a pointer pressed last, until the click that ends the press (or a moment after its
 * release): a touch moves the focus only after the finger is lifted, by the mouse events that
 * follow, so the press is kept past its `pointerup`.
 */
let pressed: EventTarget | null = null;
if (typeof document !== 'undefined') {
  let forget: ReturnType<typeof setTimeout> | undefined;
  const released = (): void => {
    clearTimeout(forget);
    pressed = null;
  };
  document.addEventListener(
    'pointerdown',
    (e) => {
      clearTimeout(forget);
      pressed = e.target;
    },
    true,
  );
  // A press dragged off its button makes no click: forgotten anyway, so that a later Tab out
  // of a field still shows its messages.
  document.addEventListener(
    'pointerup',
    () => {
      clearTimeout(forget);
      forget = setTimeout(released, 500);
    },
    true,
  );
  document.addEventListener('click', released, true);
  document.addEventListener('pointercancel', released, true);
}

/**
 * Whether a field loses the focus to a press on a submit button: it is not marked touched then.
 * Its messages would show above the button between the press and the release, moving the
 * button from under the pointer, and the click was lost (a second one was needed); the submit
 * shows every message anyway. Leaving it by Tab still shows its messages at once. (Duck-typed:
 * the renderer's unit tests run without a DOM.)
 */
export function leftForSubmit(): boolean {
  const on = pressed as { closest?: (selector: string) => unknown } | null;
  return typeof on?.closest === 'function' && on.closest('button[type="submit"]') !== null;
}
