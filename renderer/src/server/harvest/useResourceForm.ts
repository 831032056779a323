import { useId, useState } from 'react';
import type { ZodType } from 'zod';
import { toBridgeError, type FieldErrors } from '../../bridge.js';
import { errorText } from '../../format.js';
import { useServerStore } from '../store.js';

/** A problem at a place in the record: `['watch', 0, 'include', 1]` and what is wrong there. */
export interface PlacedProblem {
  path: readonly PropertyKey[];
  message: string;
}

export interface ResourceForm<T extends object> {
  values: T;
  /** Messages by the dotted path of the field they belong to (`watch.0.path`). */
  errors: FieldErrors;
  /** What belongs to no field: a conflict, the server down, ... */
  formError: string | null;
  busy: boolean;
  set: <K extends keyof T>(field: K, value: T[K]) => void;
  /** The id of the control at `path`; problems find their field by it. */
  id: (path: string) => string;
  messages: (path: string) => string[];
  /**
   * Checks `input` with the contract's own schema (the server checks again, and more), then
   * sends it; problems of either side are shown at their fields, the first one focused.
   */
  submit: <Parsed>(
    schema: ZodType<Parsed>,
    input: unknown,
    send: (parsed: Parsed) => Promise<void>,
    extra?: PlacedProblem[],
  ) => Promise<void>;
  /** Runs a call that is no save (delete, trigger): its refusal becomes the form's error. */
  run: (call: () => Promise<void>) => Promise<void>;
}

/** A zod message in the words the rest of the page uses. */
function issueText(issue: { code: string; message: string; input?: unknown; expected?: string }) {
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined || issue.input === '') return 'must be filled in';
    if (issue.expected === 'number') return 'must be a number';
  }
  return issue.message;
}

/** The problems of a refusal as the contract carries them (`details.problems`). */
function problemsOf(details: unknown): PlacedProblem[] {
  const list = (details as { problems?: unknown } | undefined)?.problems;
  if (!Array.isArray(list)) return [];
  return (list as { path?: unknown; message?: unknown }[]).flatMap((p) =>
    Array.isArray(p?.path) && typeof p.message === 'string'
      ? [{ path: p.path as PropertyKey[], message: p.message }]
      : [],
  );
}

/** The words for the part of a path below the field that shows it (`config.suffixes`). */
function below(rest: PropertyKey[]): string {
  if (rest.length === 1 && typeof rest[0] === 'number') return `line ${rest[0] + 1}: `;
  return rest.length ? `${rest.map(String).join('.')}: ` : '';
}

/** State of one harvest editor: values, and problems at the fields that have them. */
export function useResourceForm<T extends object>(initial: T): ResourceForm<T> {
  const formId = useId();
  const [values, setValues] = useState<T>(initial);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = (path: string): string => `${formId}-${path}`;

  /** Each problem at the deepest field of its path the form shows; the rest in one message. */
  const place = (problems: PlacedProblem[]): { found: FieldErrors; rest: string[] } => {
    const found: FieldErrors = {};
    const rest: string[] = [];
    for (const p of problems) {
      const path = p.path.map((part) => (typeof part === 'number' ? part : String(part)));
      let placed = false;
      for (let depth = path.length; depth > 0 && !placed; depth--) {
        const key = path.slice(0, depth).join('.');
        if (document.getElementById(id(key))) {
          (found[key] ??= []).push(`${below(path.slice(depth))}${p.message}`);
          placed = true;
        }
      }
      if (!placed) rest.push(path.length ? `${path.join('.')}: ${p.message}` : p.message);
    }
    return { found, rest };
  };

  const show = (found: FieldErrors, rest: string[]): void => {
    setErrors(found);
    setFormError(rest.length ? rest.join('; ') : null);
    const first = Object.keys(found)[0];
    if (first) document.getElementById(id(first))?.focus();
  };

  const failed = (error: unknown): void => {
    const err = useServerStore.getState().failed(toBridgeError(error));
    if (err.code === 'unauthenticated') return;
    const { found, rest } = place(problemsOf(err.details));
    if (Object.keys(found).length) show(found, rest);
    else setFormError(errorText(err));
  };

  return {
    values,
    errors,
    formError,
    busy,
    id,
    messages: (path) => errors[path] ?? [],
    set(field, value) {
      setValues((v) => ({ ...v, [field]: value }));
      setErrors((e) => {
        const stale = Object.keys(e).filter(
          (key) => key === field || key.startsWith(`${String(field)}.`),
        );
        if (!stale.length) return e;
        const next = { ...e };
        for (const key of stale) delete next[key];
        return next;
      });
    },
    async submit(schema, input, send, extra = []) {
      if (busy) return;
      setFormError(null);
      // With the input in each issue, a number field holding text is told it must be a number,
      // not that it must be filled in (zod leaves the input out of its issues otherwise).
      const parsed = schema.safeParse(input, { reportInput: true });
      const problems: PlacedProblem[] = [...extra];
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          problems.push({ path: issue.path, message: issueText(issue) });
        }
      }
      if (problems.length || !parsed.success) {
        const { found, rest } = place(problems);
        show(found, rest);
        return;
      }
      setBusy(true);
      try {
        await send(parsed.data);
        setErrors({});
      } catch (error) {
        failed(error);
      } finally {
        setBusy(false);
      }
    },
    async run(call) {
      if (busy) return;
      setFormError(null);
      setBusy(true);
      try {
        await call();
      } catch (error) {
        failed(error);
      } finally {
        setBusy(false);
      }
    },
  };
}
