import { useEffect, useLayoutEffect, useRef } from 'react';

/** Keys closer together than this come from a badge reader, not a person. */
const BADGE_KEY_GAP_MS = 30;
/** The shortest badge number taken as one from a burst of keys. */
const BADGE_MIN_LENGTH = 4;

/**
 * Follows the keys typed into a field: the badge number when `key` is the Enter that ends a
 * burst as a badge reader types one (BADGE_MIN_LENGTH characters or more, each within
 * BADGE_KEY_GAP_MS of the last), else null.
 */
export function badgeBurst(
  burst: { current: { chars: string; at: number } | null },
  key: string,
  at: number,
): string | null {
  // A reader types a capital with Shift: that key is part of the burst, not a break in it.
  if (key === 'Shift' || key === 'CapsLock') return null;
  const last = burst.current;
  const close = last !== null && at - last.at <= BADGE_KEY_GAP_MS;
  if (/^[0-9A-Za-z]$/.test(key)) {
    burst.current = { chars: close ? last.chars + key : key, at };
    return null;
  }
  burst.current = null;
  return key === 'Enter' && close && last.chars.length >= BADGE_MIN_LENGTH ? last.chars : null;
}

interface BadgeReaderHandlers {
  onChar: (ch: string) => void;
  onBackspace: () => void;
  onEnter: () => void;
  /** The Enter that ends a badge reader's burst: the badge number it typed. */
  onBadge: (badge: string) => void;
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
    const burst: { current: { chars: string; at: number } | null } = { current: null };
    const onKeyDown = (e: KeyboardEvent): void => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      if (focusTakesKeys(document.activeElement)) return;
      if (document.querySelector('dialog[open]')) return;
      const badge = badgeBurst(burst, e.key, e.timeStamp);
      if (badge !== null) {
        e.preventDefault();
        latest.current.onBadge(badge);
      } else if (/^[0-9A-Za-z]$/.test(e.key)) {
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
