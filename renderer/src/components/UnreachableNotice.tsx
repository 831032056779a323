import { useSyncExternalStore } from 'react';
import type { ReactElement } from 'react';
import { coreUnreachableSince, onCoreReachability } from '../bridge.js';

/**
 * Says that the station does not answer (browser mode: its process stopped), and that the page
 * shows what it read before then; gone once the station answers again, when the screens read
 * their state anew (useCoreEvents, on the event stream's return).
 */
export function UnreachableNotice(): ReactElement | null {
  const since = useSyncExternalStore(onCoreReachability, coreUnreachableSince);
  if (since === null) return null;
  const at = new Date(since).toLocaleTimeString([], {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return (
    <div className="error unreachable" role="alert" data-testid="station-unreachable">
      <strong>The station is not reachable</strong> (since {at}). This page shows what it knew then;
      nothing done here reaches the station until it answers again, and then the page is brought up
      to date.
    </div>
  );
}
