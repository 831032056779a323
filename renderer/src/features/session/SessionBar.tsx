import { useEffect, useState } from 'react';
import type { ReactElement } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { sessionKey, useSessionStore } from '../../stores/session.js';
import { hasDrafts } from '../forms/drafts.js';

/** The forms whose answers, typed and not sent, a log-off would lose: it asks first. */
const ANSWER_DRAFTS = ['enable:', 'post-usage:'];

/** Who is logged on, and the way out. */
export function SessionBar(): ReactElement | null {
  const session = useSessionStore((s) => s.session);
  const logoff = useSessionStore((s) => s.logoff);
  const [asking, setAsking] = useState(false);
  // A question asked of one session is not the next one's: it ended meanwhile (the idle rule,
  // another screen), and the next person must not find it open.
  const askedOf = sessionKey(session);
  useEffect(() => setAsking(false), [askedOf]);
  if (!session) return null;
  const { first_name, last_name, username, is_staff } = session.user;
  const name = `${first_name} ${last_name}`.trim() || username;
  const logOffNow = (): void => {
    setAsking(false);
    void logoff();
  };
  return (
    <div className="session-bar">
      <span>
        Logged on as <strong>{name}</strong>
        {is_staff && <span className="tag">staff</span>}
      </span>
      <button
        type="button"
        className="secondary"
        onClick={() => (hasDrafts(ANSWER_DRAFTS) ? setAsking(true) : logOffNow())}
      >
        Log off
      </button>
      <ConfirmDialog
        open={asking}
        title="Log off without sending your answers?"
        confirmLabel="Log off"
        onConfirm={logOffNow}
        onCancel={() => setAsking(false)}
      >
        <p>
          Answers you typed into a usage form and did not send are not kept after log-off; the next
          person at the instrument must not see them. Cancel, then Enable, Disable or Submit answers
          to send them.
        </p>
      </ConfirmDialog>
    </div>
  );
}
