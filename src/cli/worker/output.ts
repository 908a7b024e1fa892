/** Reading a command's output: lines, the pull request links in them, and the files it leaves. */
import fs from 'node:fs';
import path from 'node:path';

/** A line longer than this is cut into pieces, so one endless line cannot hold output back. */
const MAX_LINE = 16 * 1024;

/** Calls `onLine` for each complete line of a byte stream; `end()` flushes the last one. */
export function lineSplitter(onLine: (line: string) => void) {
  let partial = '';
  return {
    push(chunk: string) {
      partial += chunk;
      let at: number;
      while ((at = partial.indexOf('\n')) >= 0 || partial.length >= MAX_LINE) {
        const end = at >= 0 && at < MAX_LINE ? at : MAX_LINE;
        onLine(partial.slice(0, end).replace(/\r$/, ''));
        partial = partial.slice(at === end ? end + 1 : end);
      }
    },
    end() {
      if (partial) onLine(partial);
      partial = '';
    },
  };
}

/** GitHub-style `https://host/owner/repo/pull/7` and GitLab-style `https://host/group/…/project/-/merge_requests/7`. */
const PULL_REQUEST =
  /https?:\/\/[\w.-]+(?::\d+)?\/(?:[\w.-]+\/[\w.-]+\/pull\/\d+|(?:[\w.-]+\/)+-\/merge_requests\/\d+)/g;

export const pullRequestUrls = (line: string): string[] => line.match(PULL_REQUEST) ?? [];

/**
 * A question the command asks its requester: a line `::question::<text>`, or
 * `::question options=a|b|c::<text>` to offer choices (a workflow-command line, as CI runners read them).
 */
export function questionOf(line: string): { question: string; options: string[] } | null {
  const match = /^::question(?:\s+options=([^:]*))?::(.+)$/.exec(line.trim());
  if (!match) return null;
  const options = (match[1] ?? '')
    .split('|')
    .map((o) => o.trim())
    .filter(Boolean)
    .slice(0, 20)
    .map((o) => o.slice(0, 500));
  return { question: match[2]!.trim().slice(0, 4000), options };
}

/**
 * What the command used: a line `::usage::{"model_token_usage": [...]}` (the run's usage so far,
 * as one JSON object: tokens by model and category, which the server prices), reported as the
 * run's usage. Null for other lines.
 */
export function usageOf(line: string): Record<string, unknown> | null {
  const match = /^::usage::(\{.*\})$/.exec(line.trim());
  if (!match) return null;
  try {
    const value = JSON.parse(match[1]!) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const MIME_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.patch': 'text/x-diff',
  '.diff': 'text/x-diff',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
};

export const mimeTypeOf = (file: string) => MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';

/**
 * The regular files under `dir`, as paths relative to it. Symbolic links are skipped: a link to a
 * file outside the folder must not carry that file off the machine.
 */
export async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string) => {
    for (const entry of await fs.promises.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) found.push(child);
    }
  };
  await walk('');
  return found.sort();
}
