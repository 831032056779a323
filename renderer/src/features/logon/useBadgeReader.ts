import { useEffect, useLayoutEffect, useRef } from 'react';

interface BadgeReaderHandlers {
  onChar: (ch: string) => void;
  onBackspace: () => void;
  onEnter: () => void;
}

/** True when a key press already goes somewhere: a text field, a list or an editable area. */
function focusTakesKeys(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  return ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/**
 * A badge reader acts as a keyboard: it types the badge number and presses Enter. While no
 * field has focus, digits (and letters, for badges that carry them) go to the login field.
 */
export function useBadgeReader(handlers: BadgeReaderHandlers): void {
  const latest = useRef(handlers);
  useLayoutEffect(() => {
    latest.current = handlers;
  });
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent): void => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      if (focusTakesKeys(document.activeElement)) return;
      if (document.querySelector('dialog[open]')) return;
      if (/^[0-9A-Za-z]$/.test(e.key)) {
        e.preventDefault();
        latest.current.onChar(e.key);
      } else if (e.key === 'Backspace') {
        e.preventDefault();
        latest.current.onBackspace();
      } else if (e.key === 'Enter' && !(document.activeElement instanceof HTMLButtonElement)) {
        e.preventDefault();
        latest.current.onEnter();
      }
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);
}
