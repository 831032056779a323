import { useEffect, useId, useRef } from 'react';
import type { CSSProperties, ReactElement } from 'react';
import type { ReservationView } from '../../../../shared/reservationApi.js';
import { addDays, formatDay, formatHour, formatLongDay, formatTime, sameDay } from '../../time.js';

const HOURS = Array.from({ length: 24 }, (_, h) => h);
/** The hour the calendar scrolls to first: a working day, not midnight. */
const FIRST_HOUR_SHOWN = 7;

interface Segment {
  reservation: ReservationView;
  start: Date;
  end: Date;
  lane: number;
}

/**
 * The parts of the reservations that fall on one day, each in a lane so that reservations at
 * the same time (possible in an area's calendar: two of its tools) stand side by side.
 */
function segmentsOf(
  reservations: ReservationView[],
  dayStart: Date,
  dayEnd: Date,
): { segments: Segment[]; lanes: number } {
  const laneEnds: number[] = [];
  const segments: Segment[] = [];
  for (const reservation of reservations) {
    const start = new Date(Math.max(Date.parse(reservation.start), dayStart.getTime()));
    const end = new Date(Math.min(Date.parse(reservation.end), dayEnd.getTime()));
    if (end <= start) continue;
    let lane = laneEnds.findIndex((laneEnd) => laneEnd <= start.getTime());
    if (lane === -1) lane = laneEnds.length;
    laneEnds[lane] = end.getTime();
    segments.push({ reservation, start, end, lane });
  }
  return { segments, lanes: Math.max(1, laneEnds.length) };
}

/**
 * Where a time sits on its day's column, in wall-clock hours (0 to 24): the hour labels are
 * wall-clock hours, so a day of 23 or 25 hours (a change to or from summer time) still lines
 * up with them. The end of the day (the next midnight) is 24.
 */
function wallHours(time: Date, dayStart: Date): number {
  if (!sameDay(time, dayStart)) return 24;
  return time.getHours() + time.getMinutes() / 60 + time.getSeconds() / 3600;
}

function placement(segment: Segment, lanes: number, dayStart: Date): CSSProperties {
  const from = wallHours(segment.start, dayStart);
  // In the hour a clock is set back, an end can read earlier than its start: keep it visible.
  const to = Math.max(wallHours(segment.end, dayStart), from + 0.25);
  const top = (from / 24) * 100;
  const height = ((Math.min(to, 24) - from) / 24) * 100;
  return {
    top: `${top}%`,
    height: `${height}%`,
    left: `${(segment.lane / lanes) * 100}%`,
    width: `${100 / lanes}%`,
  };
}

/**
 * A week of a tool's or an area's reservations: seven day columns over the 24 hours, in the
 * browser's time zone. Each day is a section named by its date listing its reservations, so a
 * screen reader reads the week day by day; the person's own reservations are marked in words.
 */
export function WeekCalendar({
  week,
  reservations,
  targetName,
  accountId,
}: {
  week: Date;
  reservations: ReservationView[];
  /** The tool or area shown: reservations of other things (an area holding it) say theirs. */
  targetName: string;
  accountId: number;
}): ReactElement {
  const id = useId();
  const scroller = useRef<HTMLDivElement>(null);
  const today = new Date();
  const days = Array.from({ length: 7 }, (_, d) => addDays(week, d));

  useEffect(() => {
    const box = scroller.current;
    if (box) box.scrollTop = (box.scrollHeight / 24) * FIRST_HOUR_SHOWN;
  }, [week]);

  return (
    <div className="week">
      <div className="week-head" aria-hidden="true">
        <span />
        {days.map((day) => (
          <span key={day.toISOString()} className={sameDay(day, today) ? 'today' : undefined}>
            {formatDay(day)}
          </span>
        ))}
      </div>
      <div className="week-scroll" ref={scroller} tabIndex={0} aria-label="Week calendar">
        <div className="week-grid">
          <div className="hour-labels" aria-hidden="true">
            {HOURS.map((h) => (
              <span key={h}>{formatHour(new Date(2000, 0, 1, h))}</span>
            ))}
          </div>
          {days.map((day, d) => {
            const dayEnd = addDays(week, d + 1);
            const { segments, lanes } = segmentsOf(reservations, day, dayEnd);
            const headingId = `${id}-day-${d}`;
            const isToday = sameDay(day, today);
            return (
              <section
                key={day.toISOString()}
                className={isToday ? 'day-column today' : 'day-column'}
                aria-labelledby={headingId}
              >
                <h3 id={headingId} className="visually-hidden">
                  {`${formatLongDay(day)}${isToday ? ' (today)' : ''}`}
                </h3>
                {segments.length === 0 ? (
                  <p className="visually-hidden">No reservations.</p>
                ) : (
                  <ul className="day-bookings">
                    {segments.map((segment) => {
                      const r = segment.reservation;
                      const own = r.user_id === accountId || r.creator_id === accountId;
                      const what = r.target_name === targetName ? '' : `${r.target_name}, `;
                      const who = `${what}${r.user_name}${own ? ' (yours)' : ''}`;
                      const when = `${formatTime(segment.start)}–${formatTime(segment.end)}`;
                      // Whose it is comes first: a short block has room for two or three lines,
                      // and its time can also be read from where it stands against the hours.
                      return (
                        <li
                          key={r.id}
                          className={own ? 'booking own' : 'booking'}
                          style={placement(segment, lanes, day)}
                          title={`${when} ${who}${r.project_name ? `, project ${r.project_name}` : ''}`}
                          data-reservation={r.id}
                        >
                          <span className="booking-who">{who}</span>{' '}
                          <span className="booking-time">{when}</span>
                        </li>
                      );
                    })}
                  </ul>
                )}
              </section>
            );
          })}
        </div>
      </div>
    </div>
  );
}
