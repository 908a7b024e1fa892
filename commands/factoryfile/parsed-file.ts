/**
 * A file of a definition read for validation: strict YAML, or Markdown with front matter, and
 * the schema document its role is checked against (schemas.ts).
 */
import { own } from '../../src/own-keys.js';
import type { Diagnostic } from './diagnostics.js';
import type { FileRole } from './layout.js';
import type { FileSchema } from './schemas.js';
import { parseMarkdown, parseStrictYaml, type YamlPath, type YamlSource } from './yaml.js';

export type Json = Record<string, unknown>;

/** A parsed file of a resource: its front matter or document, its body, where it stands. */
export interface Parsed {
  path: string;
  role: FileRole;
  source: YamlSource;
  value: Json;
  body: string;
  content: string;
}

/** A file of the definition with the role its path gives it. */
export interface RoledFile {
  file: { path: string; content: string };
  role: FileRole;
}

/** The schema document of each role that declares a resource; other roles are not parsed. */
export const SCHEMA_OF: Partial<Record<FileRole['kind'], FileSchema>> = {
  factory: 'factory',
  agent: 'agent',
  automation: 'automation',
  runner: 'runner',
  scorer: 'scorer',
  webhook: 'webhook',
  skill: 'skill',
  agentSkill: 'skill',
  benchmarkSuite: 'benchmarkSuite',
  benchmarkTask: 'benchmarkTask',
};
const MARKDOWN: ReadonlySet<FileRole['kind']> = new Set(['agent', 'automation', 'scorer', 'skill', 'agentSkill']);

/** A file's document (or front matter) and body, and the problems of its syntax. */
export function readFile({ file, role }: RoledFile): {
  source: YamlSource | null;
  diagnostics: Diagnostic[];
  body: string;
} {
  return MARKDOWN.has(role.kind)
    ? parseMarkdown(file.content, file.path)
    : { ...parseStrictYaml(file.content, file.path), body: '' };
}

/** What `path` leads to in a parsed document, through its own keys only. */
export const valueAt = (root: unknown, path: YamlPath): unknown =>
  path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? own(v as Json, String(k)) : undefined), root);

export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The parsed files of one kind, typed by their role. */
export const filesOfKind = <K extends FileRole['kind']>(parsed: readonly Parsed[], kind: K) =>
  parsed.filter((p): p is Parsed & { role: Extract<FileRole, { kind: K }> } => p.role.kind === kind);

/** The name of the resource a file declares (its directory or file name). */
export const nameOf = (p: Parsed) => (p.role as { name: string }).name;
