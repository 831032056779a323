/**
 * The server UI's routes live in the URL fragment: the home page, `#/pending/<usage uuid>` (the
 * link of the e-mail), the files page `#/files`, the experiments `#/experiments`, the reservations
 * `#/reservations`, and the admin screens `#/admin/<section>`.
 */
export const ADMIN_SECTIONS = [
  'users',
  'projects',
  'tools',
  'tokens',
  'stations',
  'mail',
  'instruments',
  'storage-locations',
  'service-accounts',
  'schedules',
  'hooks',
  'areas',
  'reservation-questions',
] as const;
export type AdminSection = (typeof ADMIN_SECTIONS)[number];

export type ServerRoute =
  | { page: 'home' }
  | { page: 'files' }
  | { page: 'experiments' }
  | { page: 'reservations' }
  | { page: 'pending'; usage: string }
  | { page: 'admin'; section: AdminSection };

export function parseRoute(hash: string): ServerRoute {
  const pending = /^#\/pending\/([^/?#]+)$/.exec(hash);
  if (pending?.[1]) return { page: 'pending', usage: decodeURIComponent(pending[1]) };
  if (/^#\/files\/?$/.test(hash)) return { page: 'files' };
  if (/^#\/experiments\/?$/.test(hash)) return { page: 'experiments' };
  if (/^#\/reservations\/?$/.test(hash)) return { page: 'reservations' };
  const admin = /^#\/admin(?:\/([a-z-]+))?\/?$/.exec(hash);
  if (admin) {
    const section = (ADMIN_SECTIONS as readonly string[]).includes(admin[1] ?? '')
      ? (admin[1] as AdminSection)
      : 'users';
    return { page: 'admin', section };
  }
  return { page: 'home' };
}

export const adminHref = (section: AdminSection): string => `#/admin/${section}`;
export const FILES_HREF = '#/files';
export const EXPERIMENTS_HREF = '#/experiments';
export const RESERVATIONS_HREF = '#/reservations';
