import { useCallback, useEffect, useRef, useState } from 'react';
import type { ReactElement } from 'react';
import type { SessionInfo, ToolStatus } from '../../../../shared/api.js';
import { focusLost } from '../../focusLost.js';
import { useSessionStore } from '../../stores/session.js';
import { useStationStore } from '../../stores/station.js';
import { LogonPanel } from '../logon/LogonPanel.js';
import { PendingForms } from '../pending/PendingForms.js';
import { DisableForm } from './DisableForm.js';
import { EnableForm } from './EnableForm.js';
import { StaffToolActions } from './StaffToolActions.js';
import { ToolStatusPanel } from './ToolStatusPanel.js';

/** The station screen: the tool's state on one side, log-on or the forms on the other. */
export function ToolControlTab(): ReactElement {
  const status = useStationStore((s) => s.status);
  const session = useSessionStore((s) => s.session);
  // Numbered, so that the same words again (a second Enable) are a new message. `done` false:
  // what was asked for did not happen (an Enable refused as its own answers shut the tool down,
  // whose form has gone with the tool's new state).
  const [message, setMessageState] = useState<{ text: string; n: number; done: boolean } | null>(
    null,
  );
  const setMessage = useCallback(
    (text: string | null, done = true) =>
      setMessageState((m) => (text === null ? null : { text, done, n: (m?.n ?? 0) + 1 })),
    [],
  );
  const userId = session?.user.id;
  useEffect(() => setMessage(null), [userId, setMessage]);
  // An action done takes its form away, and the focus with it (to the page): the message that
  // says what happened takes it, so a keyboard or screen-reader user goes on from there.
  const messageRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (message && focusLost()) messageRef.current?.focus();
  }, [message]);
  // Logged on, the log-on panel goes with the focus: the person's forms take it (Tab goes on to
  // their first field).
  const formsRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (userId !== undefined && focusLost()) formsRef.current?.focus();
  }, [userId]);

  return (
    <div className="control-layout">
      <div className="column">
        <ToolStatusPanel status={status} />
        {session?.user.is_staff && status && (
          <StaffToolActions status={status} onDone={setMessage} />
        )}
      </div>
      <div
        className="column"
        ref={formsRef}
        {...(session ? { tabIndex: -1, role: 'region', 'aria-label': 'Your forms' } : {})}
      >
        {message && (
          <p
            ref={messageRef}
            tabIndex={-1}
            className={message.done ? 'notice success' : 'notice'}
            role="status"
          >
            {message.text}
          </p>
        )}
        {session ? (
          <SessionForms session={session} status={status} onDone={setMessage} />
        ) : (
          <LogonPanel />
        )}
      </div>
    </div>
  );
}

interface SessionFormsProps {
  session: SessionInfo;
  status: ToolStatus | null;
  onDone: (message: string, done?: boolean) => void;
}

function SessionForms({ session, status, onDone }: SessionFormsProps): ReactElement | null {
  if (session.pending.length > 0) return <PendingForms pending={session.pending} onDone={onDone} />;
  if (!status) return null;
  const me = session.user;
  const tool = status.tool.name;
  switch (status.state) {
    case 'shutdown':
      return (
        <section className="panel">
          <h2>{tool} is shut down</h2>
          <p>
            {me.is_staff
              ? 'Clear the shutdown once the tool is safe to use again.'
              : 'It cannot be enabled until staff clear the shutdown.'}
          </p>
        </section>
      );
    case 'idle':
      if (!session.qualified) {
        return (
          <section className="panel">
            <h2>Not qualified</h2>
            <p>{`You are not qualified to use ${tool}. Ask staff for a qualification.`}</p>
          </section>
        );
      }
      if (!status.operational && !me.is_staff) {
        return (
          <section className="panel">
            <h2>{`${tool} is not operational`}</h2>
            <p>Staff have marked it not operational. Only staff can start a usage on it.</p>
          </section>
        );
      }
      return <EnableForm key={status.tool.id} session={session} status={status} onDone={onDone} />;
    case 'in_use': {
      const active = status.active;
      const mine = active !== null && (active.user_id === me.id || active.operator_id === me.id);
      if (mine || me.is_staff) {
        const heading = mine ? `Disable ${tool}` : `Disable ${tool} for ${active?.user_name ?? ''}`;
        return <DisableForm key={active?.id} status={status} heading={heading} onDone={onDone} />;
      }
      return (
        <section className="panel">
          <h2>{tool} is in use</h2>
          <p>{`${active?.user_name ?? 'Someone'} is using it. Only they or staff can disable it.`}</p>
        </section>
      );
    }
  }
}
