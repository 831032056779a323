import { useEffect } from 'react';
import type { ReactElement } from 'react';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import type { AdminSection } from '../route.js';
import { useReservationAdminStore } from './adminStore.js';
import { AreasAdmin } from './AreasAdmin.js';
import { QuestionSetsAdmin } from './QuestionSetsAdmin.js';

export const RESERVATION_SECTIONS = [
  'areas',
  'reservation-questions',
] as const satisfies readonly AdminSection[];
export type ReservationSection = (typeof RESERVATION_SECTIONS)[number];

export function isReservationSection(section: AdminSection): section is ReservationSection {
  return (RESERVATION_SECTIONS as readonly string[]).includes(section);
}

/** Areas and reservation question sets (issue 7); read again whenever a section opens. */
export function ReservationAdmin({ section }: { section: ReservationSection }): ReactElement {
  const loaded = useReservationAdminStore((s) => s.loaded);
  const error = useReservationAdminStore((s) => s.error);
  useEffect(() => {
    void useReservationAdminStore.getState().load();
  }, [section]);
  return (
    <>
      <ErrorMessage message={error} />
      {!loaded && !error && <p role="status">Loading…</p>}
      {loaded && section === 'areas' && <AreasAdmin />}
      {loaded && section === 'reservation-questions' && <QuestionSetsAdmin />}
    </>
  );
}
