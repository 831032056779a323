/**
 * Whether the focus went to the page itself: the element that had it was taken away (a form
 * sent and gone, an editor closed, a button disabled while busy). A keyboard or screen-reader
 * user would go on from the top of the page; the screen gives the focus to what replaced it.
 */
export function focusLost(): boolean {
  const focused = document.activeElement;
  return focused === null || focused === document.body;
}
