// Plain aligned columns for people (two spaces apart, upper-case headers); scripts use --json instead.
import { oneLine } from './api.js';

export function table(headers: string[], rows: string[][]): string {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((row) => row.map(oneLine))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** `label  value` lines, the labels aligned: the details of one thing. */
export function details(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${oneLine(value)}\n`).join('');
}
