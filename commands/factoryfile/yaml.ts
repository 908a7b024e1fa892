/**
 * Strict YAML, as factory files are written (reference notes §6.1): one document per file, its
 * root a mapping; no anchors, aliases, explicit tags or merge keys; no key twice in a mapping;
 * only scalar keys. Each refusal is a diagnostic at the line and column where it stands. The
 * source is kept, so that later checks (the schema, references) can point at the key or value
 * they are about.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, Parser, parseAllDocuments, visit } from 'yaml';
import { type Diagnostic, diagnostic, type Position, START } from './diagnostics.js';
import { own } from '../../src/own-keys.js';

export type YamlPath = ReadonlyArray<string | number>;

/** A parsed file: its value and where each of its parts stands. */
export interface YamlSource {
  value: Record<string, unknown>;
  /** Where the key (or else the value) at `path` stands; the nearest existing parent when it is absent. */
  locate(path: YamlPath, part?: 'key' | 'value'): Position;
}

interface CstToken {
  type?: string;
  offset?: number;
  source?: string;
}

const REFUSED_TOKENS: Record<string, ['FF_ANCHOR' | 'FF_ALIAS' | 'FF_TAG', string]> = {
  anchor: ['FF_ANCHOR', 'anchors are not allowed: write the value out'],
  alias: ['FF_ALIAS', 'aliases are not allowed: write the value out'],
  tag: ['FF_TAG', 'explicit tags are not allowed'],
};

/** Every anchor, alias and tag token of the source, wherever it nests. */
function refusedTokens(text: string, lines: LineCounter, at: (p: Position) => Position, file: string) {
  const found: Diagnostic[] = [];
  const walk = (token: unknown) => {
    if (!token || typeof token !== 'object') return;
    const t = token as CstToken;
    const refused = t.type ? own(REFUSED_TOKENS, t.type) : undefined;
    if (refused && t.offset !== undefined) {
      const { line, col } = lines.linePos(t.offset);
      found.push(diagnostic(refused[0], file, `${refused[1]} (${t.source})`, at({ line, column: col })));
    }
    for (const value of Object.values(token)) {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') walk(value);
    }
  };
  for (const token of new Parser(lines.addNewLine).parse(text)) walk(token);
  return found;
}

/** How deep a factory file may nest (its schemas need a handful of levels; a parser's stack needs a bound). */
const MAX_DEPTH = 64;

/**
 * Where the text nests deeper than MAX_DEPTH, found by a scan that needs no stack: flow brackets
 * outside quotes and comments, block indentation and `- ` markers. Null when it does not.
 */
function tooDeep(text: string): Position | null {
  let depth = 0;
  let line = 0;
  let lineStart = 0;
  let quote: '"' | "'" | null = null;
  const blockDepth = (start: number) => {
    let indent = 0;
    while (text[start + indent] === ' ') indent++;
    let markers = 0;
    while (/^[-?:] /.test(text.slice(start + indent + 2 * markers, start + indent + 2 * markers + 2))) markers++;
    return indent / 2 + markers;
  };
  for (let i = -1; i < text.length; i++) {
    const c = i < 0 ? '\n' : text[i]!;
    if (c === '\n') {
      line++;
      lineStart = i + 1;
      if (blockDepth(lineStart) > MAX_DEPTH) return { line, column: 1 };
      continue;
    }
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
      continue;
    }
    const tokenStart = i === lineStart || /[\s[{,:]/.test(text[i - 1]!);
    if ((c === '"' || c === "'") && tokenStart) quote = c;
    else if (c === '#' && (i === lineStart || /\s/.test(text[i - 1]!)))
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    else if (c === '[' || c === '{') {
      if (++depth > MAX_DEPTH) return { line, column: i - lineStart + 1 };
    } else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
  return null;
}

/**
 * Parses `text` (the file `file`, or its front matter starting at line `firstLine`) strictly.
 * `empty` is the value of a document with nothing in it (front matter may be empty; a file not).
 */
export function parseStrictYaml(
  text: string,
  file: string,
  { firstLine = 1, empty }: { firstLine?: number; empty?: Record<string, unknown> } = {},
): { source: YamlSource | null; diagnostics: Diagnostic[] } {
  const lines = new LineCounter();
  const at = (p: Position): Position => ({ line: p.line + firstLine - 1, column: p.column });
  const deep = tooDeep(text);
  if (deep)
    return {
      source: null,
      diagnostics: [
        diagnostic('FF_INVALID_YAML', file, `the document nests deeper than ${MAX_DEPTH} levels`, at(deep)),
      ],
    };
  try {
    return parseChecked(text, file, lines, at, empty);
  } catch (error) {
    // A stack the depth scan did not foresee: the file is refused, not the request.
    if (!(error instanceof RangeError)) throw error;
    return {
      source: null,
      diagnostics: [diagnostic('FF_INVALID_YAML', file, 'the document nests too deeply', at(START))],
    };
  }
}

function parseChecked(
  text: string,
  file: string,
  lines: LineCounter,
  at: (p: Position) => Position,
  empty: Record<string, unknown> | undefined,
): { source: YamlSource | null; diagnostics: Diagnostic[] } {
  const posOf = (offset: number): Position => {
    const { line, col } = lines.linePos(offset);
    return at({ line, column: col });
  };
  const diagnostics = refusedTokens(text, lines, at, file);
  const docs = parseAllDocuments(text, { uniqueKeys: true, merge: false, prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [];
  if (list.length > 1) {
    const second = list[1]!;
    diagnostics.push(diagnostic('FF_INVALID_DOCUMENT', file, 'a file holds one YAML document', posOf(second.range[0])));
  }
  const doc = list[0];
  for (const error of doc?.errors ?? []) {
    const code = error.code === 'DUPLICATE_KEY' ? 'FF_DUPLICATE_KEY' : 'FF_INVALID_YAML';
    const message = code === 'FF_DUPLICATE_KEY' ? 'a key appears twice in this mapping' : error.message.split('\n')[0]!;
    diagnostics.push(diagnostic(code, file, message, posOf(error.pos[0])));
  }
  if (doc) {
    visit(doc, {
      Pair(_, pair) {
        const key = pair.key as Node | null;
        if (key && !isScalar(key))
          diagnostics.push(diagnostic('FF_INVALID_YAML', file, 'a mapping key is a scalar', posOf(key.range![0])));
        else if (isScalar(key) && key.value === '<<' && key.type === 'PLAIN')
          diagnostics.push(
            diagnostic('FF_INVALID_YAML', file, 'merge keys (<<) are not allowed', posOf(key.range![0])),
          );
      },
    });
  }
  if (diagnostics.length) return { source: null, diagnostics };

  const root = doc?.contents ?? null;
  if (root === null || (isScalar(root) && root.value === null)) {
    if (empty) return { source: { value: empty, locate: () => at(START) }, diagnostics };
    return { source: null, diagnostics: [diagnostic('FF_INVALID_DOCUMENT', file, 'the file is empty', at(START))] };
  }
  if (!isMap(root))
    return {
      source: null,
      diagnostics: [
        diagnostic('FF_INVALID_DOCUMENT', file, 'the document is a mapping of keys to values', posOf(root.range![0])),
      ],
    };

  const locate = (path: YamlPath, part: 'key' | 'value' = 'key'): Position => {
    let node: unknown = root;
    let position = posOf(root.range![0]);
    for (const [i, segment] of path.entries()) {
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment));
        if (!pair) return position;
        const key = pair.key as Node;
        const value = pair.value as Node | null;
        // A block mapping or list stands where its key does; a scalar or flow value where it is.
        const block = (isMap(value) || isSeq(value)) && !value.flow;
        position = posOf((last && (part === 'key' || block) ? key : (value ?? key)).range![0]);
        node = value;
      } else if (isSeq(node) && typeof segment === 'number' && node.items[segment]) {
        const item = node.items[segment] as Node;
        position = posOf(item.range![0]);
        node = item;
      } else return position;
    }
    return position;
  };
  return { source: { value: doc!.toJS({ maxAliasCount: 0 }) as Record<string, unknown>, locate }, diagnostics };
}

/** A Markdown resource: YAML front matter between `---` lines, then the body. */
export function parseMarkdown(
  text: string,
  file: string,
): { source: YamlSource | null; body: string; diagnostics: Diagnostic[] } {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  const fence = (line: string | undefined) => line !== undefined && line.replace(/\r$/, '').trimEnd() === '---';
  if (!fence(lines[0]))
    return {
      source: null,
      body: '',
      diagnostics: [diagnostic('FF_MALFORMED_FRONTMATTER', file, 'a Markdown resource begins with a --- line')],
    };
  const close = lines.findIndex((line, i) => i > 0 && fence(line));
  if (close < 0)
    return {
      source: null,
      body: '',
      diagnostics: [
        diagnostic('FF_MALFORMED_FRONTMATTER', file, 'the front matter opened here is never closed by a --- line'),
      ],
    };
  const frontMatter = lines.slice(1, close).join('\n');
  const body = lines
    .slice(close + 1)
    .join('\n')
    .trim();
  return { ...parseStrictYaml(frontMatter, file, { firstLine: 2, empty: {} }), body };
}
