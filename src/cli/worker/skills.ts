/**
 * The agent skills of the repositories a worker serves: every `SKILL.md` under each checkout,
 * its YAML front matter giving `name` and `description`, the text after it the instructions.
 * A file that breaks those rules is still reported, with the reason, so it can be fixed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export interface FoundSkill {
  repo: string;
  path: string;
  name: string;
  description: string;
  base_prompt: string;
  error: string | null;
}

const MAX_FILES = 1000;
const MAX_DEPTH = 8;
const MAX_BYTES = 256 * 1024;
const SKIPPED = new Set(['.git', 'node_modules', 'vendor', 'dist', 'build']);
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

function* skillFiles(root: string, dir = root, depth = 0): Generator<string> {
  if (depth > MAX_DEPTH) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && !SKIPPED.has(entry.name)) yield* skillFiles(root, path.join(dir, entry.name), depth + 1);
    else if (entry.isFile() && entry.name === 'SKILL.md') yield path.relative(root, path.join(dir, entry.name));
  }
}

/** What one SKILL.md says, or why it cannot be read as a skill. */
export function readSkill(repo: string, file: string, text: string): FoundSkill {
  const fallback = path.basename(path.dirname(file)) || repo;
  const skill = { repo, path: file.split(path.sep).join('/'), name: fallback, description: '', base_prompt: '' };
  const m = FRONT_MATTER.exec(text);
  if (!m) return { ...skill, error: 'no YAML front matter (--- name: … description: … ---)' };
  let meta: unknown;
  try {
    meta = parse(m[1]!);
  } catch (error) {
    return { ...skill, error: `front matter is not YAML: ${(error as Error).message.split('\n')[0]}` };
  }
  const { name, description } = (meta ?? {}) as { name?: unknown; description?: unknown };
  const base_prompt = m[2]!.trim().slice(0, 100_000);
  if (typeof name !== 'string' || !name.trim()) return { ...skill, base_prompt, error: 'front matter has no name' };
  if (typeof description !== 'string' || !description.trim())
    return { ...skill, name: name.trim().slice(0, 200), base_prompt, error: 'front matter has no description' };
  return {
    ...skill,
    name: name.trim().slice(0, 200),
    description: description.trim().slice(0, 2000),
    base_prompt,
    error: null,
  };
}

/** The skills of a checkout of `repo` (`owner/repo`) at `root`. */
export function findSkills(repo: string, root: string): FoundSkill[] {
  const found: FoundSkill[] = [];
  for (const file of skillFiles(root)) {
    if (found.length >= MAX_FILES) break;
    const full = path.join(root, file);
    found.push(
      fs.statSync(full).size > MAX_BYTES
        ? { ...readSkill(repo, file, ''), error: `larger than ${MAX_BYTES / 1024} KB` }
        : readSkill(repo, file, fs.readFileSync(full, 'utf8')),
    );
  }
  return found;
}
