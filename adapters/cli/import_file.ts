/**
 * The file `import` reads (CONTRACT §17): one `domain[:port]` per line, or CSV whose header names
 * `domain`, `port`, `name`, `tags` (separated by `;`), `protocol` and `alertPolicy` in any order (in
 * any case: `alertpolicy` is the same column). Each row becomes an add body for POST /v1/imports;
 * values are passed on as written, so the server judges each item exactly as POST /v1/certificates
 * would (a port that is not a number, an alert policy it does not know, fails that item alone).
 */

export interface ImportItem {
  /** 1-based line of the file the item came from, for messages. */
  line: number;
  body: Record<string, unknown>;
}

export class ImportFileError extends Error {}

/** The columns a header may name, each the add body's field it fills; headers are compared lower-cased. */
const COLUMNS = ["domain", "port", "name", "tags", "protocol", "alertPolicy"] as const;
const FIELD_OF_COLUMN = new Map<string, string>(COLUMNS.map((field) => [field.toLowerCase(), field]));

export function parseImportFile(text: string): ImportItem[] {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const first = lines.findIndex((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  if (first === -1) throw new ImportFileError("the file holds no domains: write one domain[:port] per line, or CSV with a header naming domain");
  const header = scanCsvLine(lines[first]!).cells.map((cell) => cell.trim().toLowerCase());
  return header.includes("domain") ? parseCsv(lines, first, header) : parseList(lines);
}

/**
 * One `domain[:port]` a line; `#` starts a comment, at the line's start or after a space. An IPv6
 * address is written in brackets to carry a port (`[2001:db8::1]:8443`); bare, it is passed on whole
 * (and judged as POST judges it), never cut at its last colon.
 */
function parseList(lines: string[]): ImportItem[] {
  const items: ImportItem[] = [];
  lines.forEach((raw, i) => {
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (line === "") return;
    const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(line);
    const match = bracketed ?? (line.split(":").length > 2 ? [line, line, undefined] : /^(.*?)(?::(\d+))?$/.exec(line)!);
    items.push({ line: i + 1, body: match[2] === undefined ? { domain: match[1] } : { domain: match[1], port: Number(match[2]) } });
  });
  return items;
}

function parseCsv(lines: string[], headerIndex: number, header: string[]): ImportItem[] {
  const unknown = header.filter((name) => !FIELD_OF_COLUMN.has(name));
  if (unknown.length > 0) {
    throw new ImportFileError(`line ${headerIndex + 1}: unknown column "${unknown[0]}": the header may name ${COLUMNS.join(", ")}`);
  }
  const items: ImportItem[] = [];
  // Quoted cells may hold line breaks: join physical lines until the quotes balance.
  let pending = "";
  let startLine = 0;
  for (let i = headerIndex + 1; i < lines.length; i++) {
    if (pending === "") startLine = i + 1;
    pending = pending === "" ? lines[i]! : `${pending}\n${lines[i]}`;
    if (scanCsvLine(pending).open) continue;
    const row = pending;
    pending = "";
    if (row.trim() === "" || row.trim().startsWith("#")) continue;
    const { cells } = scanCsvLine(row);
    if (cells.length > header.length) throw new ImportFileError(`line ${startLine}: ${cells.length} cells, but the header names ${header.length} columns`);
    const body: Record<string, unknown> = {};
    header.forEach((column, c) => {
      const value = (cells[c] ?? "").trim();
      if (value === "") return;
      if (column === "port") body.port = /^\d+$/.test(value) ? Number(value) : value;
      else if (column === "tags") body.tags = value.split(";").map((tag) => tag.trim()).filter((tag) => tag !== "");
      else body[FIELD_OF_COLUMN.get(column)!] = value;
    });
    items.push({ line: startLine, body });
  }
  if (pending !== "") throw new ImportFileError(`line ${startLine}: a quoted cell is never closed`);
  return items;
}

/** RFC 4180 cells of one row: commas separate, double quotes enclose, `""` is a quote. */
function scanCsvLine(row: string): { cells: string[]; open: boolean } {
  const cells: string[] = [];
  let cell = "";
  /** Characters read into this cell so far, quotes included: a quote opens a quoted cell only as its first (RFC 4180 §2.5). */
  let started = false;
  let quoted = false;
  for (let i = 0; i < row.length; i++) {
    const ch = row[i]!;
    if (quoted) {
      if (ch === '"' && row[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && !started) {
      quoted = true;
      started = true;
    } else if (ch === ",") {
      cells.push(cell);
      cell = "";
      started = false;
    } else {
      // A quote inside an unquoted cell (27" monitor) is a character of it.
      cell += ch;
      started = true;
    }
  }
  cells.push(cell);
  return { cells, open: quoted };
}
