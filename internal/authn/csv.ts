// A strict CSV reader (RFC 4180, the dialect of Go's encoding/csv): fields split
// by commas, quoted fields may hold commas, newlines and doubled quotes, empty
// lines are skipped, records may have any number of fields, and a stray quote is
// a parse error naming its line and column.

export class CsvError extends Error {
  constructor(readonly line: number, readonly column: number, detail: string) {
    super(`parse error on line ${line}, column ${column}: ${detail}`);
  }
}

const BARE_QUOTE = 'bare " in non-quoted field';
const BAD_QUOTE = 'extraneous or missing " in quoted-field';

/** Parses CSV text into records of fields. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  const input = text.replace(/\r\n/g, '\n');
  let pos = 0;
  let line = 1;
  let lineStart = 0;

  const column = () => pos - lineStart + 1;
  const newline = () => { line++; lineStart = pos + 1; };

  const quotedField = (): string => {
    let value = '';
    pos++; // opening quote
    for (;;) {
      if (pos >= input.length) throw new CsvError(line, column(), BAD_QUOTE);
      const ch = input[pos];
      if (ch === '"') {
        if (input[pos + 1] === '"') { value += '"'; pos += 2; continue; }
        pos++;
        if (pos < input.length && input[pos] !== ',' && input[pos] !== '\n') throw new CsvError(line, column(), BAD_QUOTE);
        return value;
      }
      if (ch === '\n') newline();
      value += ch;
      pos++;
    }
  };

  const plainField = (): string => {
    const start = pos;
    while (pos < input.length && input[pos] !== ',' && input[pos] !== '\n') {
      if (input[pos] === '"') throw new CsvError(line, column(), BARE_QUOTE);
      pos++;
    }
    return input.slice(start, pos);
  };

  while (pos < input.length) {
    if (input[pos] === '\n') { newline(); pos++; continue; } // empty line
    const record: string[] = [];
    for (;;) {
      record.push(input[pos] === '"' ? quotedField() : plainField());
      if (input[pos] === ',') { pos++; continue; }
      break;
    }
    if (input[pos] === '\n') { newline(); pos++; }
    records.push(record);
  }
  return records;
}
