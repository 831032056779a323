import { useEffect, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import type { ApiResult, ProjectSummary, SessionInfo } from '../../../../shared/api.js';
import type { StationReservationView } from '../../../../shared/stationReservationApi.js';
import { call, toBridgeError } from '../../bridge.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { errorText, formatDateTime, localTimes } from '../../format.js';
import { useReservationsStore } from '../../stores/reservations.js';
import { useSessionStore } from '../../stores/session.js';
import { defaultBookingTimes, fromLocalInput, isoWithOffset } from '../../time.js';
import { answerProblems } from '../forms/answerProblems.js';
import { dropDrafts, readDraft, writeDraft } from '../forms/drafts.js';
import { QuestionFormFields } from '../forms/QuestionFormFields.js';
import { useQuestionForm } from '../forms/useQuestionForm.js';
import { useToolAction } from '../tool-control/useToolAction.js';

const REFRESH_MS = 5_000;

/**
 * The tool's upcoming reservations, from the station's copy of the server's (readable offline),
 * and, for the person logged on, booking and cancelling while the server answers.
 */
export function ReservationsTab({ tool }: { tool: string }): ReactElement {
  const upcoming = useReservationsStore((s) => s.upcoming);
  const error = useReservationsStore((s) => s.error);
  const session = useSessionStore((s) => s.session);
  const [message, setMessage] = useState<string | null>(null);
  const userId = session?.user.id;

  // The list is read again every few seconds: the copy is local (cheap), and whether the server
  // answers (booking, cancelling) changes without any reservation changing.
  useEffect(() => {
    void useReservationsStore.getState().load();
    const timer = window.setInterval(() => void useReservationsStore.getState().load(), REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [userId]);
  useEffect(() => setMessage(null), [userId]);

  return (
    <div className="control-layout">
      <section className="panel column" aria-labelledby="reservations-title">
        <h2 id="reservations-title">Upcoming reservations of {tool}</h2>
        <SyncLine upcoming={upcoming} />
        <ErrorMessage message={error} />
        {upcoming && (
          <ReservationList
            reservations={upcoming.reservations}
            canCancel={session !== null && upcoming.online}
            onCancelled={setMessage}
          />
        )}
      </section>
      <div className="column">
        {message && (
          <p className="notice success" role="status">
            {message}
          </p>
        )}
        {session && upcoming && (
          <BookingPanel
            tool={tool}
            session={session}
            online={upcoming.linked && upcoming.online}
            linked={upcoming.linked}
            onBooked={setMessage}
          />
        )}
        {!session && <p className="notice">Log on to book {tool}.</p>}
      </div>
    </div>
  );
}

function SyncLine({
  upcoming,
}: {
  upcoming: ApiResult<'reservations.upcoming'> | null;
}): ReactElement | null {
  if (!upcoming) return null;
  if (!upcoming.linked) {
    return <p>This station has no server link: reservations are made on the server.</p>;
  }
  const asOf = upcoming.synced_at ? formatDateTime(upcoming.synced_at) : 'never';
  return upcoming.online ? (
    <p>Up to date with the server (last brought in {asOf}).</p>
  ) : (
    <p className="notice">
      The server cannot be reached: this is the list as of {asOf}. Booking waits until it can.
    </p>
  );
}

function ReservationList({
  reservations,
  canCancel,
  onCancelled,
}: {
  reservations: StationReservationView[];
  canCancel: boolean;
  onCancelled: (message: string) => void;
}): ReactElement {
  const action = useToolAction();
  const [confirming, setConfirming] = useState<StationReservationView | null>(null);
  if (reservations.length === 0) return <p>No upcoming reservations.</p>;
  const cancel = (r: StationReservationView): void =>
    void action.run(async () => {
      setConfirming(null);
      await call('reservations.cancel', { uuid: r.uuid });
      await useReservationsStore.getState().load();
      onCancelled(
        underWay(r)
          ? `Reservation ${r.id} ends now; the part gone by stays booked.`
          : `Reservation ${r.id} is cancelled.`,
      );
    });
  return (
    <>
      <ErrorMessage message={action.error} />
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Upcoming reservations">
        <table>
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">To</th>
              <th scope="col">For</th>
              <th scope="col">Project</th>
              <th scope="col">Reserved</th>
              {canCancel && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {reservations.map((r) => (
              <tr key={r.uuid} className={r.mine ? 'mine' : undefined}>
                <td>{formatDateTime(r.start)}</td>
                <td>{formatDateTime(r.end)}</td>
                <td>
                  {r.user_name}
                  {r.mine && ' (you)'}
                </td>
                <td>{r.project_name ?? ''}</td>
                <td>{r.area_name ? `the area ${r.area_name}` : r.target_name}</td>
                {canCancel && (
                  <td>
                    {r.mine && (
                      <button
                        type="button"
                        className="secondary"
                        disabled={action.busy}
                        onClick={() => setConfirming(r)}
                      >
                        Cancel reservation {r.id}
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ConfirmDialog
        open={confirming !== null}
        title={`Cancel reservation ${confirming?.id ?? ''}?`}
        confirmLabel="Cancel reservation"
        busy={action.busy}
        onConfirm={() => confirming && cancel(confirming)}
        onCancel={() => setConfirming(null)}
      >
        {confirming
          ? `${formatDateTime(confirming.start)} to ${formatDateTime(confirming.end)}. ` +
            (underWay(confirming)
              ? 'It is under way: it ends now, and the part gone by stays booked (a usage during it may rest on its answers).'
              : 'The record stays on the server, marked cancelled.')
          : ''}
      </ConfirmDialog>
    </>
  );
}

/** Begun already: cancelled, it is ended now instead (the server keeps the part gone by). */
const underWay = (r: { start: string }): boolean => Date.parse(r.start) < Date.now();

function BookingPanel({
  tool,
  session,
  online,
  linked,
  onBooked,
}: {
  tool: string;
  session: SessionInfo;
  online: boolean;
  linked: boolean;
  onBooked: (message: string) => void;
}): ReactElement {
  const projects = session.projects;
  // What is being booked stays while the person looks at another tab, or the server is out
  // of reach a moment (the form goes then): drafts.ts, forgotten at log-off and once booked.
  const draft = `book:${session.user.id}:${tool}`;
  const [project, setProjectState] = useState(
    () =>
      readDraft<string>(`${draft}:project`) ??
      (projects.length === 1 ? String(projects[0]?.id) : ''),
  );
  const setProject = (value: string): void => {
    setProjectState(value);
    writeDraft(`${draft}:project`, value);
  };
  const chosen = projects.find((p) => String(p.id) === project);
  return (
    <section className="panel" aria-labelledby="book-title">
      <h2 id="book-title">Book {tool}</h2>
      {!linked && <p>Reservations are made on the server.</p>}
      {linked && !online && (
        <p className="notice">Booking needs the server, which cannot be reached now.</p>
      )}
      {linked && !session.qualified && (
        <p>{`You are not qualified to use ${tool}, so you cannot book it.`}</p>
      )}
      {linked && online && session.qualified && (
        <>
          {projects.length === 0 ? (
            <p className="error" role="alert">
              You have no active project to charge.
            </p>
          ) : (
            <div className="field">
              <label htmlFor="book-project">Project</label>
              <select
                id="book-project"
                value={project}
                onChange={(e) => setProject(e.target.value)}
              >
                {projects.length > 1 && <option value="">Choose a project…</option>}
                {projects.map((p) => (
                  <option key={p.id} value={String(p.id)}>
                    {p.application_identifier ? `${p.name} (${p.application_identifier})` : p.name}
                  </option>
                ))}
              </select>
            </div>
          )}
          {chosen && (
            <BookingForm
              key={chosen.id}
              project={chosen}
              draft={`${draft}:${chosen.id}`}
              onBooked={(message) => {
                dropDrafts(`${draft}:`);
                onBooked(message);
              }}
            />
          )}
        </>
      )}
    </section>
  );
}

type BookingQuestions = ApiResult<'reservations.form'>;

/** Loads the merged reservation questions for the project, then the form itself. */
function BookingForm({
  project,
  draft,
  onBooked,
}: {
  project: ProjectSummary;
  draft: string;
  onBooked: (message: string) => void;
}): ReactElement {
  const [form, setForm] = useState<BookingQuestions | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    call('reservations.form', { project: project.id })
      .then((found) => live && setForm(found))
      .catch((e: unknown) => live && setError(errorText(toBridgeError(e))));
    return () => {
      live = false;
    };
  }, [project.id]);
  if (error) return <ErrorMessage message={error} />;
  if (!form) return <p aria-busy="true">Loading the reservation questions…</p>;
  return <BookingFields project={project} questions={form} draft={draft} onBooked={onBooked} />;
}

function BookingFields({
  project,
  questions,
  draft,
  onBooked,
}: {
  project: ProjectSummary;
  questions: BookingQuestions;
  draft: string;
  onBooked: (message: string) => void;
}): ReactElement {
  const form = useQuestionForm(questions.questions, undefined, `${draft}:answers`);
  const action = useToolAction();
  const [times, setTimesState] = useState(
    () => readDraft<{ start: string; end: string }>(`${draft}:times`) ?? defaultBookingTimes(),
  );
  const setTimes = (value: { start: string; end: string }): void => {
    setTimesState(value);
    writeDraft(`${draft}:times`, value);
  };
  const [timeProblem, setTimeProblem] = useState<{ field: 'start' | 'end'; text: string } | null>(
    null,
  );

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    const start = fromLocalInput(times.start);
    const end = fromLocalInput(times.end);
    const problem =
      start === null
        ? { field: 'start' as const, text: 'Give the start as a date and time.' }
        : end === null
          ? { field: 'end' as const, text: 'Give the end as a date and time.' }
          : end <= start
            ? { field: 'end' as const, text: 'The end must be after the start.' }
            : null;
    setTimeProblem(problem);
    const answers = form.submit({ focus: problem === null });
    if (problem) {
      document.getElementById(`book-${problem.field}`)?.focus();
      return;
    }
    if (!answers || !start || !end) return;
    void action.run(
      async () => {
        const { reservation } = await call('reservations.book', {
          project: project.id,
          start: isoWithOffset(start),
          end: isoWithOffset(end),
          answers,
        });
        await useReservationsStore.getState().load();
        form.reset();
        onBooked(
          `Reservation ${reservation.id} is booked: ${formatDateTime(reservation.start)} to ` +
            `${formatDateTime(reservation.end)}.`,
        );
      },
      (err) => {
        const field = /^(start|end): /.exec(err.message)?.[1] as 'start' | 'end' | undefined;
        if (field) {
          setTimeProblem({ field, text: err.message.slice(field.length + 2) });
          return true;
        }
        return form.showServerProblems(answerProblems(err));
      },
    );
  };

  const timeField = (field: 'start' | 'end', label: string): ReactElement => {
    const invalid = timeProblem?.field === field;
    return (
      <div className={invalid ? 'field invalid' : 'field'}>
        <label htmlFor={`book-${field}`}>{label}</label>
        <input
          id={`book-${field}`}
          type="datetime-local"
          value={times[field]}
          aria-invalid={invalid || undefined}
          aria-describedby={`book-${field}-messages`}
          onChange={(e) => setTimes({ ...times, [field]: e.target.value })}
        />
        <ul id={`book-${field}-messages`} className="messages">
          {invalid && <li>{timeProblem.text}</li>}
        </ul>
      </div>
    );
  };

  return (
    <form noValidate onSubmit={onSubmit} aria-label="Booking">
      {timeField('start', 'From')}
      {timeField('end', 'To')}
      {questions.questions.length > 0 && (
        <>
          <h3>Reservation questions</h3>
          <QuestionFormFields form={form} />
        </>
      )}
      {/* The server names the reservation a booking overlaps with its times in UTC. */}
      <ErrorMessage message={action.error === null ? null : localTimes(action.error)} />
      <div className="actions">
        <button type="submit" className="primary" disabled={action.busy}>
          {action.busy ? 'Booking…' : 'Book'}
        </button>
      </div>
    </form>
  );
}
