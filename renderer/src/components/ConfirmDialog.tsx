import { useEffect, useId, useRef } from 'react';
import type { ReactElement, ReactNode } from 'react';

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
}

/**
 * A modal confirmation on the native <dialog>: it traps focus, and Escape closes it (the
 * browser's "cancel" event), which counts as "No".
 */
export function ConfirmDialog(props: ConfirmDialogProps): ReactElement {
  const { open, title, children, confirmLabel, onConfirm, onCancel, busy } = props;
  const ref = useRef<HTMLDialogElement>(null);
  // Its own id: a page holds several (the session bar's beside a form's), and a fixed one named
  // them all after the first.
  const titleId = useId();
  /** What had the focus when the dialog opened: it gets it back when the dialog closes. */
  const opener = useRef<HTMLElement | null>(null);
  // A keyboard user goes on where they were, not from the top of the page.
  const giveFocusBack = (): void => {
    if (opener.current?.isConnected) opener.current.focus();
    opener.current = null;
  };
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      opener.current =
        document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
    }
    if (!open && dialog.open) {
      dialog.close();
      giveFocusBack();
    }
  }, [open]);
  // Taken away while open (a parent that renders it only while asking): the same.
  useEffect(() => giveFocusBack, []);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div className="dialog-body">{children}</div>
      <div className="actions">
        <button type="button" className="secondary" onClick={onCancel} autoFocus>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm} disabled={busy}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
