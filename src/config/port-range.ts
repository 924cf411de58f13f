/** The node port range of Services (`--service-node-port-range`), as kube-apiserver parses and prints it. */

/** An inclusive range of ports, e.g. 30000-32767. */
export interface PortRange {
  readonly base: number;
  /** How many ports the range holds. */
  readonly size: number;
  /** `base-last`, as kube prints the range in messages. */
  readonly text: string;
}

function port(text: string, whole: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new Error(`unable to parse port range: ${whole}`);
  return Number(text);
}

/**
 * Parses `first-last`, `first+count` (count ports after first) or a single port, as Go's
 * utilnet.ParsePortRange does. Throws with a one-line reason otherwise.
 */
export function parsePortRange(text: string): PortRange {
  const trimmed = text.trim();
  let first: number;
  let last: number;
  if (trimmed.includes('-')) {
    const [a = '', b = '', ...rest] = trimmed.split('-');
    if (rest.length > 0) throw new Error(`unable to parse port range: ${text}`);
    first = port(a, text);
    last = port(b, text);
  } else if (trimmed.includes('+')) {
    const [a = '', b = '', ...rest] = trimmed.split('+');
    if (rest.length > 0) throw new Error(`unable to parse port range: ${text}`);
    first = port(a, text);
    last = first + port(b, text);
  } else {
    first = port(trimmed, text);
    last = first;
  }
  if (last > 65535 || last < first || first === 0) throw new Error(`range ${text} is not a valid range of ports (1-65535)`);
  return { base: first, size: last - first + 1, text: `${first}-${last}` };
}

/** Whether `value` is one of the range's ports. */
export function holdsPort(range: PortRange, value: number): boolean {
  return Number.isInteger(value) && value >= range.base && value < range.base + range.size;
}

/**
 * How many ports at the start of the range are kept for static (requested) allocation, as kube's
 * KEP-3668 reserves them: dynamic allocation takes from above them first. min(max(16, size/32), 128),
 * or none for ranges of 16 ports or fewer.
 */
export function staticPortBandSize(range: PortRange): number {
  if (range.size <= 16) return 0;
  return Math.min(Math.max(16, Math.floor(range.size / 32)), 128);
}
