/** CSV files of what a chart or list shows (RFC 4180; text a spreadsheet would run as a formula is prefixed with '). */

export interface Table {
  columns: string[];
  rows: Array<Array<string | number>>;
}

const cell = (v: string | number): string => {
  let text = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

const toCsv = (t: Table): string => `${[t.columns, ...t.rows].map((r) => r.map(cell).join(',')).join('\r\n')}\r\n`;

export function downloadCsv(file: string, table: Table): void {
  const url = URL.createObjectURL(new Blob([toCsv(table)], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = file;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
