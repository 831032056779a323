/* Where the Data tab puts the focus when what held it goes away. */

/** Where the focus goes when what held it is gone: the files' heading. */
export const FILES_HEADING_ID = 'harvest-files-heading';

/** The focus is nowhere the person can use: on the page, or on a button disabled under it. */
export function focusLost(): boolean {
  const at = document.activeElement;
  return (
    at === null ||
    at === document.body ||
    !at.isConnected ||
    (at instanceof HTMLButtonElement && at.disabled)
  );
}
