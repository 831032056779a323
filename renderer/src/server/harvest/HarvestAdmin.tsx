import { useEffect } from 'react';
import type { ReactElement } from 'react';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import type { AdminSection } from '../route.js';
import { HooksAdmin } from './HooksAdmin.js';
import { InstrumentsAdmin } from './InstrumentsAdmin.js';
import { SchedulesAdmin } from './SchedulesAdmin.js';
import { ServiceAccountsAdmin } from './ServiceAccountsAdmin.js';
import { useHarvestAdminStore } from './store.js';
import { StorageLocationsAdmin } from './StorageLocationsAdmin.js';

export const HARVEST_SECTIONS = [
  'instruments',
  'storage-locations',
  'service-accounts',
  'schedules',
  'hooks',
] as const satisfies readonly AdminSection[];
export type HarvestSection = (typeof HARVEST_SECTIONS)[number];

export function isHarvestSection(section: AdminSection): section is HarvestSection {
  return (HARVEST_SECTIONS as readonly string[]).includes(section);
}

/**
 * The harvest management sections (spec 002). The records are read again whenever a section
 * opens: stations change what they show (last seen, deployments, runs).
 */
export function HarvestAdmin({ section }: { section: HarvestSection }): ReactElement {
  const loaded = useHarvestAdminStore((s) => s.loaded);
  const error = useHarvestAdminStore((s) => s.error);
  useEffect(() => {
    void useHarvestAdminStore.getState().load();
  }, [section]);
  return (
    <>
      <ErrorMessage message={error} />
      {!loaded && !error && <p role="status">Loading…</p>}
      {loaded && section === 'instruments' && <InstrumentsAdmin />}
      {loaded && section === 'storage-locations' && <StorageLocationsAdmin />}
      {loaded && section === 'service-accounts' && <ServiceAccountsAdmin />}
      {loaded && section === 'schedules' && <SchedulesAdmin />}
      {loaded && section === 'hooks' && <HooksAdmin />}
    </>
  );
}
