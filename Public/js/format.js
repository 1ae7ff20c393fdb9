// Dates and durations in words, the same on the dashboard and the status page.

const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long' });

/** "30 Nov 2026, 09:28" in the reader's time zone, or "—" when there is no date. */
export function formatDateTime(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : dateTime.format(date);
}

/** "30 November 2026", or "—". */
export function formatDate(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : dateOnly.format(date);
}

/** "2 d 4 h", "3 h 10 min", "5 min": the largest two units of a span in milliseconds. */
export function formatSpan(milliseconds) {
  const minutes = Math.max(0, Math.floor(Math.abs(milliseconds) / 60000));
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  if (days > 0) return hours > 0 ? `${days} d ${hours} h` : `${days} d`;
  if (hours > 0) return rest > 0 ? `${hours} h ${rest} min` : `${hours} h`;
  return `${rest} min`;
}

/** Time left until a due date: { overdue, text }, e.g. { false, "2 d 4 h left" } or { true, "overdue by 3 h" }. */
export function timeLeft(dueIso, now = Date.now()) {
  if (!dueIso) return { overdue: false, text: 'no due date' };
  const left = new Date(dueIso).getTime() - now;
  return left < 0 ? { overdue: true, text: `overdue by ${formatSpan(left)}` } : { overdue: false, text: `${formatSpan(left)} left` };
}

/** Words for a machine word: "identity_check" → "identity check". */
export function words(machineWord) {
  return String(machineWord ?? '').replaceAll('_', ' ');
}

/** "1.2 MB", "340 kB", "12 bytes". */
export function formatBytes(size) {
  if (size === null || size === undefined) return '';
  if (size < 1000) return `${size} bytes`;
  if (size < 1000 * 1000) return `${(size / 1000).toFixed(0)} kB`;
  return `${(size / 1000 / 1000).toFixed(1)} MB`;
}
