/**
 * What the station's handler modules (this folder) get from the Station (station.ts): its
 * database and, through functions, the session, the attached controls and the helpers that
 * throw the contract's errors, so none of them has to be public on the class.
 */
import type { ApiName, CoreEvent, SessionInfo } from '../../../../shared/api.js';
import type { Db } from '../../db/open.js';
import type { UserRow } from '../records.js';
import type { DesktopControl, Handlers, HarvestControl, SyncControl } from '../station.js';

/** The handlers of the calls named `<namespace>.…`, typed as in the station's full map. */
export type HandlersOf<Namespace extends string> = Pick<
  Handlers,
  Extract<ApiName, `${Namespace}.${string}`>
>;

export interface HandlerContext {
  db: Db;
  now(): string;
  clock(): number;
  /** Who is logged on at the screen, or null. */
  session(): { readonly userId: number; readonly startedAt: string } | null;
  /** The person logged on; throws unauthenticated when nobody is. */
  actor(): UserRow;
  /** As actor(), and throws forbidden (`only staff can <what>`) for anyone but staff. */
  requireStaff(what: string): UserRow;
  staffLoggedOn(): boolean;
  stationTool(): string | null;
  /** The server link, null while none is attached. */
  sync(): SyncControl | null;
  /** The attached server link that has a server; throws unavailable otherwise. */
  server(): SyncControl;
  desktop(): DesktopControl | null;
  harvest(): HarvestControl | null;
  pendingFor(userId: number): SessionInfo['pending'];
  emit(event: CoreEvent): void;
  /** A tool's state changed (and the usage `usage`, when given). */
  changed(tool: string, usage?: string): void;
}
