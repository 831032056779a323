import type { HarvestFileView } from '../../../../shared/api.js';
import { formatDateTime } from '../../format.js';

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB'];

/** Decimal units, as disks and networks are sold: 1 MB = 1,000,000 bytes. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  // The unit is chosen for the value as shown, rounded: 999,999 bytes are "1.0 MB", not
  // "1000 kB".
  while (unit < UNITS.length - 1 && (unit === 0 ? value : Math.round(value)) >= 1000) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 9.95 ? 1 : 0)} ${UNITS[unit]}`;
}

/** Time left, rounded up to whole seconds first: 119.6 s is "2 min 0 s", never "1 min 60 s". */
export function formatDuration(seconds: number): string {
  const whole = Math.ceil(seconds);
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${whole % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** What happened to a file, in a word or two. */
export function statusWord(file: HarvestFileView): string {
  if (file.state === 'gone') return 'source deleted';
  if (file.state === 'waiting') return file.last_transfer ? 'waiting (re-queued)' : 'waiting';
  return file.last_transfer?.status ?? file.state;
}

/**
 * When a failed file is tried again, after its attempts in the failure list. A time that has
 * come is no longer named: the file is due and waits in the queue for its turn (the status is
 * read again while the tab is open, `now` moving on with it), where "next try" and a time gone
 * by would read as a try missed.
 */
export function nextTryWords(
  file: Pick<HarvestFileView, 'instrument' | 'next_attempt_at'>,
  how: {
    /** Being copied now. */
    active: boolean;
    /** Its instrument waits for its history: its files are not tried before it is here. */
    waitingForHistory: boolean;
    /** Its instrument is not harvested here now (turned off, or moved to another tool). */
    notHarvested?: boolean;
    now: number;
  },
): string {
  if (how.active) return '; being tried again now';
  if (how.notHarvested)
    return `; not tried: ${file.instrument} is not harvested on this station now`;
  const at = file.next_attempt_at;
  const due = at !== null && Date.parse(at) <= how.now;
  if (how.waitingForHistory) {
    const once = `once ${file.instrument}'s history is here`;
    if (at === null) return `; not retried by itself; Retry ${once}`;
    return due ? `; next try ${once}` : `; next try ${once}, not before ${formatDateTime(at)}`;
  }
  if (at === null) return '; not retried by itself';
  return due ? '; due, waiting for its turn' : `; next try ${formatDateTime(at)}`;
}
