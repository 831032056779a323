import type { HistoryTable } from '../../../../shared/usage/history.js';
import { toCsv } from '../../../../shared/usage/history.js';
import { toLocalDay } from '../../time.js';

function fileSafe(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'tool';
}

/**
 * Saves the table as CSV through a Blob and a temporary download link. A UTF-8 byte order
 * mark lets spreadsheet programs read accents right.
 */
export function downloadCsv(tool: string, table: HistoryTable): void {
  const csv = toCsv(table.columns, table.rows);
  const blob = new Blob(['\uFEFF', csv], { type: 'text/csv;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  // The station's day (its browser's zone), as the table shows days.
  link.download = `usage-history-${fileSafe(tool)}-${toLocalDay(new Date())}.csv`;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
