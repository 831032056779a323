import type { ActiveTransfer } from '../../../../shared/api.js';

/** At most this many transfers get a progress bar; the rest are counted. */
export const MOST_SHOWN = 10;

/**
 * Whether a transfer's bytes are all written: what is left is the check and the placing
 * (re-read and hash, flush, rename, record), which no rate or time left describes. Small files
 * copied in a batch report their bytes only then.
 */
export function finishing(transfer: ActiveTransfer): boolean {
  return transfer.bytes_done >= transfer.bytes_total;
}

/**
 * The transfers to show with a bar, those still copying first, and how many more are under
 * way: a burst of small files puts hundreds in flight at once (batches of up to 128), which
 * would push the failures and the files far down the tab for nothing but full bars.
 */
export function shownTransfers(
  active: readonly ActiveTransfer[],
  most: number = MOST_SHOWN,
): { shown: ActiveTransfer[]; more: number } {
  const copying = active.filter((t) => !finishing(t));
  const done = active.filter((t) => finishing(t));
  const shown = [...copying, ...done].slice(0, most);
  return { shown, more: active.length - shown.length };
}
