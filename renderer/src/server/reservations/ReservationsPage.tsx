import { useEffect, useState } from 'react';
import type { ReactElement } from 'react';
import { isStaffRole } from '../../../../shared/api.js';
import type { ReservationTargets, ReservationView } from '../../../../shared/reservationApi.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { toBridgeError } from '../../bridge.js';
import { errorText, formatDateTime } from '../../format.js';
import { serverCall } from '../serverBridge.js';
import { useServerStore } from '../store.js';
import { BookingForm } from './BookingForm.js';
import { isCalendarOf, useReservationsStore, type TargetKey } from './store.js';
import { addDays, formatLongDay } from '../../time.js';
import { WeekCalendar } from './WeekCalendar.js';

function nameOf(targets: ReservationTargets, key: TargetKey): string {
  const [kind, id] = key.split(':');
  const list = kind === 'tool' ? targets.tools : targets.areas;
  return list.find((x) => x.id === Number(id))?.name ?? key;
}

/**
 * Reservations: pick a tool (one is qualified on; staff any) or an area, see its week, book it
 * with the reservation questions that apply, and cancel one's own upcoming reservations.
 */
export function ReservationsPage(): ReactElement {
  const account = useServerStore((s) => s.account);
  const targets = useReservationsStore((s) => s.targets);
  const target = useReservationsStore((s) => s.target);
  const week = useReservationsStore((s) => s.week);
  const calendar = useReservationsStore((s) => s.calendar);
  const shown = useReservationsStore(isCalendarOf);
  const error = useReservationsStore((s) => s.error);
  const [notice, setNotice] = useState<string | null>(null);

  const accountId = account?.id ?? 0;
  useEffect(() => {
    void useReservationsStore.getState().load(accountId);
  }, [accountId]);

  const store = useReservationsStore.getState();
  if (!targets) {
    return (
      <main className="reservations">
        <ErrorMessage message={error} />
        {!error && <p role="status">Loading…</p>}
      </main>
    );
  }
  const targetName = target ? nameOf(targets, target) : '';
  const onBooked = (reservation: ReservationView): void => {
    setNotice(
      `Booked ${reservation.target_name} from ${formatDateTime(reservation.start)} to ${formatDateTime(
        reservation.end,
      )}${reservation.user_id === account?.id ? '' : ` for ${reservation.user_name}`}.`,
    );
    store.showWeek(new Date(reservation.start));
    void store.refreshMine();
  };

  return (
    <main className="reservations">
      <ErrorMessage message={error} />
      {notice && (
        <p className="notice success" role="status">
          {notice}
        </p>
      )}
      {target === null ? (
        <p className="notice">
          There is nothing you can book yet: no tool you are qualified on, and no area. Ask staff
          for a qualification.
        </p>
      ) : (
        <>
          <section className="panel" aria-labelledby="calendar-title">
            <div className="history-bar calendar-bar">
              <div className="field target-field">
                <label htmlFor="reservation-target">Tool or area</label>
                <select
                  id="reservation-target"
                  value={target}
                  onChange={(e) => {
                    setNotice(null);
                    store.choose(e.target.value as TargetKey);
                  }}
                >
                  {targets.tools.length > 0 && (
                    <optgroup label="Tools">
                      {targets.tools.map((t) => (
                        <option key={`tool:${t.id}`} value={`tool:${t.id}`}>
                          {t.name}
                        </option>
                      ))}
                    </optgroup>
                  )}
                  {targets.areas.length > 0 && (
                    <optgroup label="Areas">
                      {targets.areas.map((a) => (
                        <option key={`area:${a.id}`} value={`area:${a.id}`}>
                          {a.tools.length
                            ? `${a.name} (${a.tools.map((t) => t.name).join(', ')})`
                            : a.name}
                        </option>
                      ))}
                    </optgroup>
                  )}
                </select>
              </div>
              <div className="actions" role="group" aria-label="Week">
                <button
                  type="button"
                  className="secondary"
                  onClick={() => store.showWeek(addDays(week, -7))}
                >
                  Previous week
                </button>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => store.showWeek(new Date())}
                >
                  Today
                </button>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => store.showWeek(addDays(week, 7))}
                >
                  Next week
                </button>
              </div>
            </div>
            <h2 id="calendar-title">{`${targetName}: week of ${formatLongDay(week)}`}</h2>
            <p role="status" className="hint">
              {!shown
                ? 'Loading the week…'
                : calendar.length === 0
                  ? 'No reservations this week.'
                  : calendar.length === 1
                    ? '1 reservation this week.'
                    : `${calendar.length} reservations this week.`}
            </p>
            <WeekCalendar
              week={week}
              reservations={shown ? calendar : []}
              targetName={targetName}
              accountId={accountId}
            />
          </section>
          <BookingForm
            targets={targets}
            target={target}
            targetName={targetName}
            onBooked={onBooked}
            onSending={() => setNotice(null)}
          />
        </>
      )}
      <MyReservations onCancelled={(message) => setNotice(message)} />
    </main>
  );
}

function MyReservations({ onCancelled }: { onCancelled: (message: string) => void }): ReactElement {
  const account = useServerStore((s) => s.account);
  const mine = useReservationsStore((s) => s.mine);
  const [asking, setAsking] = useState<ReservationView | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const cancel = (reservation: ReservationView): void => {
    setBusy(true);
    setError(null);
    serverCall('reservations.cancel', { id: reservation.id })
      .then((result) => {
        setAsking(null);
        onCancelled(
          result.reservation.cancelled
            ? `Cancelled the reservation of ${reservation.target_name} from ${formatDateTime(
                reservation.start,
              )}.`
            : `Ended the reservation of ${reservation.target_name} now: the time from now on is ` +
                'free, and the part gone by stays booked.',
        );
        const store = useReservationsStore.getState();
        void store.refreshMine();
        void store.refreshCalendar();
      })
      .catch((failure: unknown) => {
        setAsking(null);
        const err = useServerStore.getState().failed(toBridgeError(failure));
        if (err.code !== 'unauthenticated') setError(errorText(err));
      })
      .finally(() => setBusy(false));
  };

  return (
    <section className="panel" aria-labelledby="mine-title">
      <h2 id="mine-title">My upcoming reservations</h2>
      <ErrorMessage message={error} />
      {mine.length === 0 ? (
        <p className="hint">You have no upcoming reservations.</p>
      ) : (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Tool or area</th>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Project</th>
                <th scope="col">For</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {mine.map((r) => (
                <tr key={r.id}>
                  <th scope="row">{r.target_name}</th>
                  <td>{formatDateTime(r.start)}</td>
                  <td>{formatDateTime(r.end)}</td>
                  <td>{r.project_name ?? ''}</td>
                  <td>{r.user_id === account?.id ? 'me' : r.user_name}</td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Cancel the reservation of ${r.target_name} from ${formatDateTime(r.start)}…`}
                      onClick={() => setAsking(r)}
                    >
                      Cancel…
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {asking && (
        <ConfirmDialog
          open
          title={`Cancel the reservation of ${asking.target_name}?`}
          confirmLabel="Cancel reservation"
          busy={busy}
          onConfirm={() => cancel(asking)}
          onCancel={() => setAsking(null)}
        >
          <p>
            {`${formatDateTime(asking.start)} to ${formatDateTime(asking.end)}. ` +
              (Date.parse(asking.start) < Date.now() && !isStaffRole(account?.role)
                ? 'It is under way: it ends now, the time from now on becomes free for others, and the part gone by stays booked (a usage during it may rest on its answers).'
                : 'The time becomes free for others; the record is kept, marked cancelled.')}
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
