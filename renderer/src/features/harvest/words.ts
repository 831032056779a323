import type { HarvestFileView } from '../../../../shared/api.js';

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB'];

/** Decimal units, as disks and networks are sold: 1 MB = 1,000,000 bytes. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** What happened to a file, in a word or two. */
export function statusWord(file: HarvestFileView): string {
  if (file.state === 'gone') return 'source deleted';
  if (file.state === 'waiting') return file.last_transfer ? 'waiting (re-queued)' : 'waiting';
  return file.last_transfer?.status ?? file.state;
}
