import { useEffect } from 'react';
import type { ReactElement } from 'react';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { HarvestAdmin, isHarvestSection } from '../harvest/HarvestAdmin.js';
import { isReservationSection, ReservationAdmin } from '../reservations/ReservationAdmin.js';
import { adminHref, ADMIN_SECTIONS, type AdminSection } from '../route.js';
import { MailAdmin } from './MailAdmin.js';
import { ProjectsAdmin } from './ProjectsAdmin.js';
import { StationsAdmin } from './StationsAdmin.js';
import { useAdminStore } from './store.js';
import { TokensAdmin } from './TokensAdmin.js';
import { ToolsAdmin } from './ToolsAdmin.js';
import { UsersAdmin } from './UsersAdmin.js';

const LABELS: Record<AdminSection, string> = {
  users: 'People',
  projects: 'Projects',
  tools: 'Tools and forms',
  tokens: 'API tokens',
  stations: 'Stations',
  mail: 'E-mail',
  instruments: 'Instruments',
  'storage-locations': 'Storage locations',
  'service-accounts': 'Service accounts',
  schedules: 'Schedules',
  hooks: 'Hooks',
  areas: 'Areas',
  'reservation-questions': 'Reservation questions',
};

/** The facility's administration: one section per kind of record, linked by the URL. */
export function AdminPage({ section }: { section: AdminSection }): ReactElement {
  const loaded = useAdminStore((s) => s.loaded);
  const error = useAdminStore((s) => s.error);
  // Read again on entering each section: a save in another section (a qualification given on
  // a tool, a station switched off among the service accounts) changed what this one shows,
  // and a form filled from stale lists would send the old values back when saved.
  useEffect(() => {
    void useAdminStore.getState().load();
  }, [section]);
  return (
    <main className="admin">
      <nav className="tabs admin-tabs" aria-label="Administration">
        {ADMIN_SECTIONS.map((s) => (
          <a
            key={s}
            href={adminHref(s)}
            className="tab-link"
            aria-current={s === section ? 'page' : undefined}
          >
            {LABELS[s]}
          </a>
        ))}
      </nav>
      <ErrorMessage message={error} />
      {!loaded && !error && <p role="status">Loading…</p>}
      {loaded && section === 'users' && <UsersAdmin />}
      {loaded && section === 'projects' && <ProjectsAdmin />}
      {loaded && section === 'tools' && <ToolsAdmin />}
      {loaded && section === 'tokens' && <TokensAdmin />}
      {loaded && section === 'stations' && <StationsAdmin />}
      {loaded && section === 'mail' && <MailAdmin />}
      {loaded && isHarvestSection(section) && <HarvestAdmin section={section} />}
      {loaded && isReservationSection(section) && <ReservationAdmin section={section} />}
    </main>
  );
}
