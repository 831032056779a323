/**
 * A trash can drawn by the page: an emoji (U+1F5D1) needs an emoji font, which a station may
 * lack, and then shows as an empty box. Decorative: the control it sits in names itself
 * (aria-label). Drawn in the text's colour, at the text's size.
 */
import type { ReactElement } from 'react';

export function TrashIcon(): ReactElement {
  return (
    <svg
      viewBox="0 0 24 24"
      width="1.25em"
      height="1.25em"
      aria-hidden="true"
      focusable="false"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      <path d="M3 6h18" />
      <path d="M8 6V4a1 1 0 0 1 1-1h6a1 1 0 0 1 1 1v2" />
      <path d="M5 6l1 14a1 1 0 0 0 1 1h10a1 1 0 0 0 1-1l1-14" />
      <path d="M10 11v6M14 11v6" />
    </svg>
  );
}
