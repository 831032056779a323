import { useCallback, useEffect, useRef } from 'react';

/**
 * Moves the focus to the element of the id given, once the next render that changes one of
 * `drawn` is on the page. A control that takes itself (or its row) off the page with the focus
 * on it would leave a keyboard user on the page's body, and an element that render draws can
 * take the focus only after it. Renders that change none of `drawn` leave the wish waiting: a
 * row made anew under the same id is focused as it is now, not as it was.
 */
export function useFocusAfterRender(...drawn: unknown[]): (id: string) => void {
  const target = useRef<string | null>(null);
  useEffect(() => {
    const id = target.current;
    if (id === null) return;
    target.current = null;
    document.getElementById(id)?.focus();
  }, drawn);
  return useCallback((id: string) => {
    target.current = id;
  }, []);
}
