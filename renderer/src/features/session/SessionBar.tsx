import type { ReactElement } from 'react';
import { useSessionStore } from '../../stores/session.js';

/** Who is logged on, and the way out. */
export function SessionBar(): ReactElement | null {
  const session = useSessionStore((s) => s.session);
  const logoff = useSessionStore((s) => s.logoff);
  if (!session) return null;
  const { first_name, last_name, username, is_staff } = session.user;
  const name = `${first_name} ${last_name}`.trim() || username;
  return (
    <div className="session-bar">
      <span>
        Logged on as <strong>{name}</strong>
        {is_staff && <span className="tag">staff</span>}
      </span>
      <button type="button" className="secondary" onClick={() => void logoff()}>
        Log off
      </button>
    </div>
  );
}
