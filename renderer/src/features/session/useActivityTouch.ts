import { useEffect, useRef } from 'react';
import { call } from '../../bridge.js';
import { useSessionStore } from '../../stores/session.js';

const TOUCH_EVERY_MS = 30_000;

/**
 * Tells the core the screen is in use (its idle rule logs off after a quiet while): on
 * keyboard, pointer or wheel input while someone is logged on, at most once every 30 s (the
 * core counts no read as input: screens read on their own).
 */
export function useActivityTouch(): void {
  const loggedOn = useSessionStore((s) => s.session !== null);
  const last = useRef(0);
  useEffect(() => {
    if (!loggedOn) return;
    const onInput = (): void => {
      const now = Date.now();
      if (now - last.current < TOUCH_EVERY_MS) return;
      last.current = now;
      call('session.touch', {}).catch(() => {
        // A lost touch only shortens the idle time; the next input tries again.
        last.current = 0;
      });
    };
    const options = { capture: true, passive: true };
    window.addEventListener('keydown', onInput, options);
    window.addEventListener('pointerdown', onInput, options);
    window.addEventListener('wheel', onInput, options);
    return () => {
      window.removeEventListener('keydown', onInput, options);
      window.removeEventListener('pointerdown', onInput, options);
      window.removeEventListener('wheel', onInput, options);
    };
  }, [loggedOn]);
}
