/**
 * Go's text/tabwriter as kube's APF debug dumps use it (`NewWriter(w, 8, 0, 1, ' ', 0)`): each line
 * is a list of cells whose last one is not aligned; a column of cells is padded with spaces to its
 * widest cell plus the padding (at least the minimum width), column by column within each block of
 * consecutive lines that have a cell there, as tabwriter's recursive format does.
 */

/** Character count as Go's tabwriter counts width (runes). */
function width(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** `lines` (cells of each line) laid out; every line ends with a newline. */
export function tabwriterText(lines: readonly (readonly string[])[], minWidth = 8, padding = 1): string {
  const out: string[] = [];
  const widths: number[] = [];
  const writeLines = (from: number, to: number): void => {
    for (let i = from; i < to; i++) {
      const line = lines[i];
      let text = '';
      line.forEach((cell, j) => {
        text += cell;
        if (j < widths.length) text += ' '.repeat(Math.max(0, widths[j] - width(cell)));
      });
      out.push(`${text}\n`);
    }
  };
  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    let start = line0;
    for (let i = line0; i < line1; i++) {
      if (column >= lines[i].length - 1) continue;
      writeLines(start, i);
      start = i;
      let w = minWidth;
      for (; i < line1 && column < lines[i].length - 1; i++) w = Math.max(w, width(lines[i][column]) + padding);
      widths.push(w);
      format(start, i);
      widths.pop();
      start = i;
    }
    writeLines(start, line1);
  };
  format(0, lines.length);
  return out.join('');
}
