import { useId, useState } from 'react';
import type { FormEvent, ReactElement } from 'react';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { toBridgeError } from '../bridge.js';
import { credentialsRefused, errorText } from '../format.js';
import { useServerStore } from './store.js';

const EMPTY = 'Enter your e-mail address and your password.';

/** E-mail and password; the JWT the server answers is kept for this tab only. */
export function LoginScreen(): ReactElement {
  const id = useId();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setErrorState] = useState<{
    text: string;
    /** What it is about: the fields left empty, both fields refused, or neither. */
    about: 'empty' | 'credentials' | null;
  } | null>(null);
  const setError = (text: string | null, about: 'empty' | 'credentials' | null = null): void =>
    setErrorState(text === null ? null : { text, about });
  const message = useServerStore((s) => s.loginMessage);
  const login = useServerStore((s) => s.login);

  // While an error shows, the fields it is about (an empty one; both, for refused credentials)
  // are marked invalid and described by it.
  const describedByError = (empty: boolean) =>
    error?.about === 'credentials' || (error?.about === 'empty' && empty)
      ? { 'aria-invalid': true as const, 'aria-describedby': `${id}-error` }
      : {};

  const onSubmit = (e: FormEvent): void => {
    e.preventDefault();
    if (busy) return;
    if (!email.trim() || !password) {
      setError(EMPTY, 'empty');
      // The first one missing takes the focus, so that the next key types into it.
      document.getElementById(!email.trim() ? `${id}-email` : `${id}-password`)?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    login(email.trim(), password)
      .catch((error: unknown) => {
        const err = toBridgeError(error);
        // A password refused goes; one the server never checked (not reachable) stays.
        const refused = credentialsRefused(err);
        if (refused) setPassword('');
        setError(errorText(err), refused ? 'credentials' : null);
      })
      .finally(() => setBusy(false));
  };

  return (
    <form className="panel login" noValidate onSubmit={onSubmit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Log in</h2>
      {message && <p className="notice">{message}</p>}
      <div className="field">
        <label htmlFor={`${id}-email`}>E-mail</label>
        <input
          id={`${id}-email`}
          type="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          {...describedByError(!email.trim())}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-password`}>Password</label>
        <input
          id={`${id}-password`}
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          {...describedByError(!password)}
        />
      </div>
      <ErrorMessage id={`${id}-error`} message={error?.text ?? null} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
      </div>
    </form>
  );
}
