import { useState } from 'react';
import type { ReactElement, ReactNode } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';

/**
 * A delete button that asks first. The dialog is only mounted while open, so a page with
 * several of them keeps one dialog (and one dialog title) at a time.
 */
export function DeleteRecord({
  what,
  busy,
  onDelete,
  children,
}: {
  /** "instrument TEM camera": in the button's name and the question. */
  what: string;
  busy: boolean;
  onDelete: () => void;
  /** What deleting it means. */
  children: ReactNode;
}): ReactElement {
  const [asking, setAsking] = useState(false);
  return (
    <>
      <button
        type="button"
        className="secondary"
        aria-label={`Delete ${what}…`}
        onClick={() => setAsking(true)}
      >
        Delete…
      </button>
      {asking && (
        <ConfirmDialog
          open
          title={`Delete ${what}?`}
          confirmLabel="Delete"
          busy={busy}
          onConfirm={() => {
            setAsking(false);
            onDelete();
          }}
          onCancel={() => setAsking(false)}
        >
          {children}
        </ConfirmDialog>
      )}
    </>
  );
}
