import { useId, useState } from 'react';
import type { ZodType } from 'zod';
import { fieldProblems, toBridgeError, type FieldErrors } from '../../bridge.js';
import { errorText } from '../../format.js';
import { useServerStore } from '../store.js';

export interface AdminForm<T extends object> {
  formId: string;
  values: T;
  errors: FieldErrors;
  /** An error that belongs to no one field (the server is down, a conflict, ...). */
  formError: string | null;
  busy: boolean;
  set: <K extends keyof T>(field: K, value: T[K]) => void;
  fieldId: (field: keyof T & string) => string;
  /**
   * Checks the values with the contract's own schema (the server checks again), then sends;
   * problems of either side are shown at their fields and the first one gets the focus.
   */
  submit: <Parsed>(
    schema: ZodType<Parsed>,
    send: (parsed: Parsed) => Promise<void>,
  ) => Promise<void>;
  /** Runs a call that is no save (a delete): its refusal becomes the form's error. */
  run: (call: () => Promise<void>) => Promise<void>;
}

/** State of one admin editor: values, field errors from the schema and from the server. */
export function useAdminForm<T extends object>(initial: T): AdminForm<T> {
  const formId = useId();
  const [values, setValues] = useState<T>(initial);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fieldId = (field: string): string => `${formId}-${field}`;

  const show = (found: FieldErrors): void => {
    setErrors(found);
    const first = Object.keys(found)[0];
    if (first) document.getElementById(fieldId(first))?.focus();
  };

  return {
    formId,
    values,
    errors,
    formError,
    busy,
    fieldId,
    set(field, value) {
      setValues((v) => ({ ...v, [field]: value }));
      setErrors((e) => {
        if (!(field in e)) return e;
        const next = { ...e };
        delete next[field as string];
        return next;
      });
    },
    async submit(schema, send) {
      if (busy) return;
      setFormError(null);
      const parsed = schema.safeParse(values);
      if (!parsed.success) {
        const found: FieldErrors = {};
        for (const issue of parsed.error.issues) {
          const field = String(issue.path[0] ?? '');
          (found[field] ??= []).push(issue.message);
        }
        show(found);
        return;
      }
      setBusy(true);
      try {
        await send(parsed.data);
        setErrors({});
      } catch (error) {
        const err = useServerStore.getState().failed(toBridgeError(error));
        if (err.code === 'unauthenticated') return;
        // Only fields this form has: a problem elsewhere is shown as the form's error.
        const found = Object.fromEntries(
          Object.entries(fieldProblems(err)).filter(([field]) => field in values),
        );
        if (Object.keys(found).length) show(found);
        else setFormError(errorText(err));
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
        const err = useServerStore.getState().failed(toBridgeError(error));
        if (err.code !== 'unauthenticated') setFormError(errorText(err));
      } finally {
        setBusy(false);
      }
    },
  };
}
