import { useRef, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import { toBridgeError } from '../../bridge.js';
import { applyNumpadKey, Numpad } from '../../components/Numpad.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { credentialsRefused, logonErrorText } from '../../format.js';
import { useSessionStore } from '../../stores/session.js';
import { useUiStore } from '../../stores/ui.js';
import { badgeBurst, useBadgeReader } from './useBadgeReader.js';

/** Log-on with username or badge number plus PIN; a badge reader "types" into it. */
export function LogonPanel(): ReactElement {
  const logon = useSessionStore((s) => s.logon);
  const notice = useSessionStore((s) => s.notice);
  const keypad = useUiStore((s) => s.keypad);
  const [login, setLogin] = useState('');
  const [pin, setPin] = useState('');
  const [error, setErrorState] = useState<{
    text: string;
    field: 'login' | 'pin' | null;
  } | null>(null);
  // The field an error is about (none: the station not reachable) is marked invalid and
  // described by it.
  const setError = (text: string | null, field: 'login' | 'pin' | null = null): void =>
    setErrorState(text === null ? null : { text, field });
  const invalid = (field: 'login' | 'pin') =>
    error?.field === field
      ? { 'aria-invalid': true as const, 'aria-describedby': 'logon-error' }
      : {};
  const [busy, setBusy] = useState(false);
  const loginRef = useRef<HTMLInputElement>(null);
  const pinRef = useRef<HTMLInputElement>(null);
  const burst = useRef<{ chars: string; at: number } | null>(null);

  const submit = async (): Promise<void> => {
    if (busy) return;
    if (!login.trim()) {
      setError('Enter your username or badge number.', 'login');
      loginRef.current?.focus();
      return;
    }
    if (!pin) {
      setError('Enter your PIN.', 'pin');
      pinRef.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await logon(login.trim(), pin);
    } catch (e) {
      const err = toBridgeError(e);
      // A PIN refused goes; one the station never checked (not reachable) stays, to try again.
      const refused = credentialsRefused(err);
      setError(logonErrorText(err), refused ? 'pin' : null);
      if (refused) setPin('');
      pinRef.current?.focus();
      setBusy(false);
    }
  };

  // Enter after the login moves on to the PIN, unless a PIN is already there.
  const loginEntered = (): void => {
    if (pin) void submit();
    else pinRef.current?.focus();
  };

  // A badge swiped: its number is the login, whatever was typed there before, and the PIN
  // follows anew.
  const swiped = (badge: string): void => {
    setLogin(badge);
    setPin('');
    setError(null);
    pinRef.current?.focus();
  };

  useBadgeReader({
    onChar: (ch) => {
      setError(null);
      setLogin((value) => value + ch);
    },
    onBackspace: () => setLogin((value) => value.slice(0, -1)),
    onEnter: () => {
      if (login) loginEntered();
    },
    onBadge: swiped,
  });

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    void submit();
  };

  return (
    <section className="panel logon" aria-labelledby="logon-title">
      <h2 id="logon-title">Log on</h2>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <p className="hint">Type your username or swipe your badge, then enter your PIN.</p>
      <form noValidate onSubmit={onSubmit}>
        <div className="field">
          <label htmlFor="logon-login">Username or badge number</label>
          <input
            id="logon-login"
            ref={loginRef}
            name="login"
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            value={login}
            onChange={(e) => setLogin(e.target.value)}
            {...invalid('login')}
            onKeyDown={(e) => {
              // A badge swiped into a login someone began and left is that badge's login, not
              // the two run together (a wrong login, and a try of the next person's PIN).
              const badge = badgeBurst(burst, e.key, e.timeStamp);
              if (e.key === 'Enter') {
                e.preventDefault();
                if (badge !== null) swiped(badge);
                else loginEntered();
              }
            }}
          />
        </div>
        <div className="field">
          <label htmlFor="logon-pin">PIN</label>
          <input
            id="logon-pin"
            ref={pinRef}
            name="pin"
            type="password"
            inputMode="numeric"
            autoComplete="current-password"
            value={pin}
            onChange={(e) => setPin(e.target.value)}
            {...invalid('pin')}
            onKeyDown={(e) => {
              // A badge swiped while the PIN field has focus (where a failed log-on leaves it)
              // types its number here: faster than anyone types, then Enter. It is a login, not
              // a PIN to try (and use up the last person's tries with).
              const badge = badgeBurst(burst, e.key, e.timeStamp);
              if (badge === null) return;
              e.preventDefault();
              swiped(badge);
            }}
          />
        </div>
        {keypad && (
          <Numpad label="Keypad for PIN" onKey={(k) => setPin((p) => applyNumpadKey(p, k))} />
        )}
        <ErrorMessage id="logon-error" message={error?.text ?? null} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Logging on…' : 'Log on'}
          </button>
        </div>
      </form>
    </section>
  );
}
