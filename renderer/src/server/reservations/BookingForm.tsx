import { useEffect, useId, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import type {
  ReservationForm,
  ReservationTargets,
  ReservationView,
} from '../../../../shared/reservationApi.js';
import type { Answers } from '../../../../shared/questions/index.js';
import { LabelledField } from '../../components/LabelledField.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { fieldProblems, toBridgeError, type FieldErrors } from '../../bridge.js';
import { answerProblems } from '../../features/forms/answerProblems.js';
import { describedBy } from '../../features/forms/FieldFrame.js';
import { QuestionFormFields } from '../../features/forms/QuestionFormFields.js';
import { useQuestionForm } from '../../features/forms/useQuestionForm.js';
import { errorText, localTimes } from '../../format.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';
import { targetArgs, type TargetKey } from './store.js';
import { defaultBookingTimes, fromLocalInput, isoWithOffset } from '../../time.js';

/** The booking's own fields, by the names the server's problems use. */
const LABELS = {
  user: 'Book for',
  project: 'Project',
  start: 'Start',
  end: 'End',
  tool: 'Tool or area',
  area: 'Tool or area',
} as const;
type Field = keyof typeof LABELS;
const isField = (name: string): name is Field => Object.prototype.hasOwnProperty.call(LABELS, name);

interface Values {
  user: number;
  project: number | null;
  start: string;
  end: string;
}

/** What the person typed, checked before anything is sent (the server checks again). */
function fieldErrorsOf(values: Values): FieldErrors {
  const found: FieldErrors = {};
  if (values.project === null) found.project = ['choose a project'];
  const start = fromLocalInput(values.start);
  const end = fromLocalInput(values.end);
  if (!start) found.start = ['give the date and time it starts'];
  if (!end) found.end = ['give the date and time it ends'];
  else if (start && end <= start) found.end = ['must be after the start'];
  return found;
}

/**
 * Booking the chosen tool or area: who for (staff may book for others), the project, start and
 * end in the browser's time zone, and the reservation questions that apply to this target and
 * project, in the same form fields as usage questions.
 */
export function BookingForm({
  targets,
  target,
  targetName,
  onBooked,
  onSending,
}: {
  targets: ReservationTargets;
  target: TargetKey;
  targetName: string;
  onBooked: (reservation: ReservationView) => void;
  /** A booking is being sent: what the page said of the last one is out of date. */
  onSending?: () => void;
}): ReactElement {
  const account = useServerStore((s) => s.account);
  const me = account?.id ?? 0;
  const projectsOf = (user: number): { id: number; name: string }[] => {
    const person = targets.people.find((p) => p.id === user);
    return targets.projects.filter((p) => person?.projects.includes(p.id));
  };
  const [values, setValues] = useState<Values>(() => ({
    user: me,
    project: projectsOf(me)[0]?.id ?? null,
    ...defaultBookingTimes(),
  }));
  const [questions, setQuestions] = useState<{ key: string; form: ReservationForm } | null>(null);
  const [questionsError, setQuestionsError] = useState<string | null>(null);
  /** Bumped after each booking, so the questions start afresh. */
  const [round, setRound] = useState(0);
  /** Bumped to read the questions again (an admin changed them while the form was open). */
  const [asked, setAsked] = useState(0);

  const formKey = `${target}|${values.project ?? ''}`;
  useEffect(() => {
    if (values.project === null) return;
    let current = true;
    setQuestionsError(null);
    serverCall('reservations.questions', { ...targetArgs(target), project: values.project })
      .then((form) => {
        if (current) setQuestions({ key: `${target}|${values.project}`, form });
      })
      .catch((error: unknown) => {
        const err = useServerStore.getState().failed(error);
        if (current && err.code !== 'unauthenticated') setQuestionsError(errorText(err));
      });
    return () => {
      current = false;
    };
  }, [target, values.project, asked]);

  return (
    <section className="panel booking-form" aria-labelledby="booking-title">
      <h2 id="booking-title">{`Book ${targetName}`}</h2>
      {projectsOf(values.user).length === 0 && (
        <p className="notice">
          {values.user === me
            ? 'You are in no active project, so you cannot book yet. Ask an admin to add you to one.'
            : 'This person is in no active project.'}
        </p>
      )}
      <ErrorMessage message={questionsError} />
      {questions?.key === formKey || values.project === null ? (
        <BookingFields
          key={`${formKey}|${round}`}
          targets={targets}
          target={target}
          values={values}
          setValues={setValues}
          projects={projectsOf(values.user)}
          questions={questions?.key === formKey ? questions.form : null}
          draftKey={`booking:${me}:${target}:${round}`}
          onSending={onSending}
          onQuestionsStale={() => setAsked((a) => a + 1)}
          onBooked={(reservation) => {
            setRound((r) => r + 1);
            onBooked(reservation);
          }}
        />
      ) : (
        !questionsError && <p role="status">Loading the questions…</p>
      )}
    </section>
  );
}

function BookingFields({
  targets,
  target,
  values,
  setValues,
  projects,
  questions,
  draftKey,
  onSending,
  onQuestionsStale,
  onBooked,
}: {
  targets: ReservationTargets;
  target: TargetKey;
  values: Values;
  setValues: (update: (v: Values) => Values) => void;
  projects: { id: number; name: string }[];
  questions: ReservationForm | null;
  /** The answers typed are kept under it while the person or project changes. */
  draftKey: string;
  onSending: (() => void) | undefined;
  onQuestionsStale: () => void;
  onBooked: (reservation: ReservationView) => void;
}): ReactElement {
  const id = useId();
  const account = useServerStore((s) => s.account);
  const qform = useQuestionForm(questions?.questions ?? [], undefined, draftKey);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fieldId = (field: Field): string => `${id}-${field}`;

  const set = <K extends keyof Values>(field: K, value: Values[K]): void => {
    setValues((v) => ({ ...v, [field]: value }));
    setErrors((e) => {
      if (!(field in e)) return e;
      const next = { ...e };
      delete next[field];
      return next;
    });
  };

  const show = (found: FieldErrors): void => {
    setErrors(found);
    const first = Object.keys(found)[0];
    if (first && isField(first)) document.getElementById(fieldId(first))?.focus();
  };

  const send = async (answers: Answers): Promise<void> => {
    const start = fromLocalInput(values.start);
    const end = fromLocalInput(values.end);
    if (!start || !end || values.project === null) return;
    setBusy(true);
    onSending?.();
    try {
      const { reservation } = await serverCall('reservations.book', {
        ...targetArgs(target),
        project: values.project,
        start: isoWithOffset(start),
        end: isoWithOffset(end),
        answers,
        ...(values.user !== account?.id ? { user: values.user } : {}),
      });
      qform.reset(); // the answers were for this booking
      onBooked(reservation);
    } catch (error) {
      const err = useServerStore.getState().failed(toBridgeError(error));
      if (err.code === 'unauthenticated') return;
      // The questions may have changed since the form was opened (a question added that the
      // form lacks): read them again, so each problem shows at its field.
      if (err.code === 'validation_failed') onQuestionsStale();
      if (qform.showServerProblems(answerProblems(err))) {
        setFormError(errorText(err));
        return;
      }
      const found = Object.fromEntries(
        Object.entries(fieldProblems(err)).filter(([field]) => isField(field)),
      );
      show(found);
      // The message names its field ("end: is in the past"); say it with the field's label.
      const [field, messages] = Object.entries(found)[0] ?? [];
      setFormError(
        field && isField(field) && messages?.[0]
          ? `${LABELS[field]}: ${messages[0]}`
          : localTimes(errorText(err)),
      );
    } finally {
      setBusy(false);
    }
  };

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    if (busy) return;
    setFormError(null);
    const found = fieldErrorsOf(values);
    const answers = qform.submit({ focus: Object.keys(found).length === 0 });
    if (Object.keys(found).length) {
      show(found);
      const [field, messages] = Object.entries(found)[0] ?? [];
      if (field && isField(field)) setFormError(`${LABELS[field]}: ${messages?.[0] ?? ''}`);
      return;
    }
    if (!answers) return;
    void send(answers);
  };

  const messagesOf = (field: Field): string[] => errors[field] ?? [];
  const zoneHint = `${id}-zone`;
  const describe = (field: Field, hint?: boolean): string | undefined =>
    describedBy(hint && zoneHint, messagesOf(field).length > 0 && `${fieldId(field)}-messages`);

  return (
    <form noValidate onSubmit={onSubmit} aria-labelledby="booking-title">
      {targets.people.length > 1 && (
        <LabelledField id={fieldId('user')} label={LABELS.user} messages={messagesOf('user')}>
          <select
            id={fieldId('user')}
            value={values.user}
            aria-invalid={messagesOf('user').length > 0 || undefined}
            aria-describedby={describe('user')}
            onChange={(e) => {
              const user = Number(e.target.value);
              const person = targets.people.find((p) => p.id === user);
              setValues((v) => ({
                ...v,
                user,
                project: targets.projects.find((p) => person?.projects.includes(p.id))?.id ?? null,
              }));
            }}
          >
            {targets.people.map((p) => (
              <option key={p.id} value={p.id}>
                {p.id === account?.id ? `${p.name} (me)` : p.name}
              </option>
            ))}
          </select>
        </LabelledField>
      )}
      <div className="field-grid">
        <LabelledField
          id={fieldId('project')}
          label={LABELS.project}
          messages={messagesOf('project')}
        >
          <select
            id={fieldId('project')}
            value={values.project ?? ''}
            aria-invalid={messagesOf('project').length > 0 || undefined}
            aria-describedby={describe('project')}
            onChange={(e) => set('project', e.target.value === '' ? null : Number(e.target.value))}
          >
            {projects.length === 0 && <option value="">No active project</option>}
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </LabelledField>
        <LabelledField id={fieldId('start')} label={LABELS.start} messages={messagesOf('start')}>
          <input
            id={fieldId('start')}
            type="datetime-local"
            value={values.start}
            aria-invalid={messagesOf('start').length > 0 || undefined}
            aria-describedby={describe('start', true)}
            onChange={(e) => set('start', e.target.value)}
          />
        </LabelledField>
        <LabelledField id={fieldId('end')} label={LABELS.end} messages={messagesOf('end')}>
          <input
            id={fieldId('end')}
            type="datetime-local"
            value={values.end}
            aria-invalid={messagesOf('end').length > 0 || undefined}
            aria-describedby={describe('end', true)}
            onChange={(e) => set('end', e.target.value)}
          />
        </LabelledField>
      </div>
      <p id={zoneHint} className="hint">
        {`Start and end are in your time zone, ${Intl.DateTimeFormat().resolvedOptions().timeZone}.`}
      </p>
      {questions && (
        <fieldset className="reservation-questions">
          <legend>Reservation questions</legend>
          {questions.sets.length > 0 && (
            <p className="hint">{`From: ${questions.sets.map((s) => s.name).join(', ')}`}</p>
          )}
          <QuestionFormFields form={qform} />
        </fieldset>
      )}
      <ErrorMessage message={formError} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || values.project === null}>
          {busy ? 'Booking…' : 'Book'}
        </button>
      </div>
    </form>
  );
}
