import { useState } from 'react';
import { toBridgeError } from '../../bridge.js';
import type { BridgeError } from '../../bridge.js';
import { errorText } from '../../format.js';
import { useSessionStore } from '../../stores/session.js';

interface ToolAction {
  busy: boolean;
  error: string | null;
  setError: (error: string | null) => void;
  /** Runs one call; a failure becomes words in `error` unless `onError` takes it. */
  run: (action: () => Promise<void>, onError?: (error: BridgeError) => boolean) => Promise<void>;
}

/** Busy flag and error text around one call to the core. */
export function useToolAction(): ToolAction {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run: ToolAction['run'] = async (action, onError) => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      const err = toBridgeError(e);
      if (err.code === 'unauthenticated') {
        // The session ended meanwhile (idle rule, another screen): back to the log-on.
        useSessionStore.getState().ended('Your session has ended. Log on again.');
      } else if (!onError?.(err)) setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
