/**
 * What validation reports: one diagnostic per problem, with a stable `FF_*` code (reference notes
 * §6.3), the file, and the line and column (1-based) where the problem stands in it. A problem of
 * a whole file, or of the tree, stands at 1:1.
 */
export const DIAGNOSTIC_CODES = [
  'FF_MISSING_FACTORY',
  'FF_UNSUPPORTED_VERSION',
  'FF_UNSUPPORTED_PATH',
  'FF_DUPLICATE_PATH',
  'FF_INVALID_DOCUMENT',
  'FF_MALFORMED_FRONTMATTER',
  'FF_INVALID_YAML',
  'FF_DUPLICATE_KEY',
  'FF_ANCHOR',
  'FF_ALIAS',
  'FF_TAG',
  'FF_UNKNOWN_FIELD',
  'FF_MISSING_REQUIRED',
  'FF_TYPE_MISMATCH',
  'FF_INVALID_VALUE',
  'FF_INVALID_REFERENCE',
  'FF_INVALID_MCP',
  'FF_INVALID_TRIGGER',
  'FF_INVALID_EVENT',
  'FF_INVALID_FILTER',
] as const;

export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

export interface Diagnostic {
  code: DiagnosticCode;
  message: string;
  path: string;
  line: number;
  column: number;
}

/** Position in a file: 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

export const START: Position = { line: 1, column: 1 };

export const diagnostic = (code: DiagnosticCode, path: string, message: string, at: Position = START): Diagnostic => ({
  code,
  message,
  path,
  line: at.line,
  column: at.column,
});

/** Files first (by path), then by position: the order the CLI prints and the API answers. */
export const byPosition = (a: Diagnostic, b: Diagnostic) =>
  a.path.localeCompare(b.path) || a.line - b.line || a.column - b.column || a.code.localeCompare(b.code);

/** `file:line:column code message`, one line, as `shopfloor factory validate` prints it. */
export const formatDiagnostic = (d: Diagnostic) => `${d.path}:${d.line}:${d.column} ${d.code} ${d.message}`;
