/**
 * Which RFC 3339 texts Go's `time.Parse(time.RFC3339, text)` accepts, the check behind
 * metav1.Time's and metav1.MicroTime's JSON decoding in every apimachinery client. A time Go refuses
 * must not be stored: one such value makes a whole list undecodable for client-go (and for the Python
 * client). Go is stricter than the grammar (`T` and `Z` upper case only; month, day for the month and
 * year, hour, minute, second in range) and looser in the offset (up to +24:60), as written here.
 */

const LAYOUT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|([+-])(\d{2}):(\d{2}))$/;

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Go's error for `text` (`parsing time "2024-13-01T00:00:00Z": month out of range`), or undefined
 * when Go accepts it.
 */
export function goTimeError(text: string): string | undefined {
  const m = LAYOUT.exec(text);
  if (m === null) {
    const quoted = JSON.stringify(text);
    return `parsing time ${quoted} as "2006-01-02T15:04:05Z07:00": cannot parse ${quoted} as "2006"`;
  }
  // Go checks each field as it reads it, and the day against its month last.
  const month = Number(m[2]);
  if (month < 1 || month > 12) return outOfRange(text, 'month');
  if (Number(m[4]) > 23) return outOfRange(text, 'hour');
  if (Number(m[5]) > 59) return outOfRange(text, 'minute');
  if (Number(m[6]) > 59) return outOfRange(text, 'second');
  if (m[9] !== undefined) {
    if (Number(m[11]) > 60) return outOfRange(text, 'time zone offset minute');
    if (Number(m[10]) > 24) return outOfRange(text, 'time zone offset hour');
  }
  const day = Number(m[3]);
  if (day < 1 || day > daysIn(month, Number(m[1]))) return outOfRange(text, 'day');
  return undefined;
}

function outOfRange(text: string, what: string): string {
  return `parsing time ${JSON.stringify(text)}: ${what} out of range`;
}
