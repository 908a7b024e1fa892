/**
 * `shopfloor factory validate|push|apply`: a factory's definition kept in a repository. `validate`
 * runs offline with the server's own rules (a pre-commit hook or CI check); `push` and `apply`
 * are clients of the API (a deploy job), like the reference worker.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { CliCommand } from '../../src/feature.js';
import { type Diagnostic, formatDiagnostic } from './diagnostics.js';
import { MAX_FILE_BYTES, MAX_FILES } from './files.js';
import { DEFINITION_FOLDERS } from './layout.js';
import { type FactoryFile, validateFiles } from './validate.js';

const USAGE = `  shopfloor factory validate <dir>          check a factory's definition files offline; prints
                                            file:line:column CODE message, exits 1 when invalid
  shopfloor factory push <dir> --factory UID [--branch NAME] [--url URL] [--api-key KEY]
                                            upload them as the branch NAME (default main): created,
                                            or its files replaced; exits 1 when invalid
  shopfloor factory apply <dir> --factory UID [--branch NAME] [--url URL] [--api-key KEY]
                                            push, then apply the branch: the factory's next
                                            definition version (the key defaults to
                                            $SHOPFLOOR_API_KEY, the URL to $SHOPFLOOR_URL)`;

/** factory.yaml and every file under the definition's folders, hidden files and folders left out. */
function readDefinition(dir: string): FactoryFile[] {
  const files: FactoryFile[] = [];
  const add = (relative: string) => {
    const full = path.join(dir, relative);
    const size = fs.statSync(full).size;
    if (size > MAX_FILE_BYTES) throw new Error(`${relative} is larger than ${MAX_FILE_BYTES} bytes`);
    files.push({ path: relative.split(path.sep).join('/'), content: fs.readFileSync(full, 'utf8') });
    if (files.length > MAX_FILES) throw new Error(`a definition has at most ${MAX_FILES} files`);
  };
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const child = path.join(relative, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) add(child);
    }
  };
  if (!fs.statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
  if (fs.existsSync(path.join(dir, 'factory.yaml'))) add('factory.yaml');
  for (const folder of DEFINITION_FOLDERS) if (fs.existsSync(path.join(dir, folder))) walk(folder);
  return files;
}

const print = (dir: string, diagnostics: readonly Diagnostic[]) => {
  for (const d of diagnostics) console.log(formatDiagnostic({ ...d, path: path.join(dir, d.path) }));
};

function validate(dir: string): number {
  const files = readDefinition(dir);
  const result = validateFiles(files);
  print(dir, result.diagnostics);
  if (!result.valid) {
    console.error(`${dir}: ${result.diagnostics.length} problem${result.diagnostics.length === 1 ? '' : 's'}`);
    return 1;
  }
  console.error(
    `${dir}: a valid ${result.schema_version} definition (${files.length} files); ${result.state_dependent.length} references to models, environments, secrets and webhooks are checked when it is applied`,
  );
  return 0;
}

interface Problem {
  status: number;
  code?: string;
  detail?: string;
  diagnostics?: Diagnostic[];
}

class Api {
  constructor(
    private readonly url: string,
    private readonly key: string,
  ) {}

  async call<T>(method: string, route: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.url.replace(/\/$/, '')}/api/v1${route}`, {
      method,
      headers: {
        authorization: `Bearer ${this.key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    if (!res.ok)
      throw Object.assign(new Error(json?.detail ?? res.statusText), { problem: { status: res.status, ...json } });
    return json as T;
  }
}

type Status = {
  uid: string;
  name: string;
  status: string;
  valid: boolean;
  diagnostics: Diagnostic[];
  diagnostic_count: number;
  changes: Record<string, Record<string, string[] | boolean>> | null;
  live_version: number;
};

const summary = (s: Status) => {
  const lines = [`branch ${s.name} (${s.uid}): ${s.status}, ${s.valid ? 'valid' : 'invalid'}`];
  for (const [kind, change] of Object.entries(s.changes ?? {})) {
    if (kind === 'factory') {
      if (change.changed) lines.push('  factory.yaml: changed');
      continue;
    }
    const parts = Object.entries(change)
      .filter(([, names]) => Array.isArray(names) && names.length)
      .map(([what, names]) => `${what} ${(names as string[]).join(', ')}`);
    if (parts.length) lines.push(`  ${kind}: ${parts.join('; ')}`);
  }
  return lines.join('\n');
};

async function push(api: Api, dir: string, factory: string, name: string): Promise<Status> {
  const files = readDefinition(dir);
  const route = `/factory/${encodeURIComponent(factory)}/branches`;
  const found = async () =>
    (await api.call<{ branches: Status[] }>('GET', `${route}?name=${encodeURIComponent(name)}`)).branches[0];
  let existing = await found();
  if (!existing) {
    try {
      return await api.call<Status>('POST', route, { name, files });
    } catch (error) {
      // Pushed concurrently by another job: replace its files instead.
      if ((error as { problem?: Problem }).problem?.code !== 'branch_name_taken') throw error;
      existing = await found();
      if (!existing) throw error;
    }
  }
  return api.call<Status>('PUT', `${route}/${existing.uid}/files`, { files });
}

async function run(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      factory: { type: 'string' },
      branch: { type: 'string', default: 'main' },
      url: { type: 'string', default: process.env.SHOPFLOOR_URL ?? 'http://127.0.0.1:8080' },
      'api-key': { type: 'string', default: process.env.SHOPFLOOR_API_KEY },
    },
  });
  const [dir] = positionals;
  if (!dir || !['validate', 'push', 'apply'].includes(action ?? '') || positionals.length > 1) {
    console.error(`usage:\n${USAGE}`);
    return 2;
  }
  if (action === 'validate') return validate(dir);
  const problems = [
    !values.factory && '--factory <uid> is required',
    !values['api-key'] && 'an API key is required: --api-key or SHOPFLOOR_API_KEY',
  ].filter(Boolean);
  if (problems.length) {
    console.error(`${problems.join('\n')}\nusage:\n${USAGE}`);
    return 2;
  }
  const api = new Api(values.url, values['api-key']!);
  try {
    const pushed = await push(api, dir, values.factory!, values.branch);
    print(dir, pushed.diagnostics);
    console.log(summary(pushed));
    if (!pushed.valid) return 1;
    if (action === 'push') return 0;
    const applied = await api.call<Status>(
      'POST',
      `/factory/${encodeURIComponent(values.factory!)}/branches/${pushed.uid}/apply`,
    );
    console.log(`applied: the factory's definition is version ${applied.live_version}`);
    return 0;
  } catch (error) {
    const problem = (error as { problem?: Problem }).problem;
    if (problem?.diagnostics) print(dir, problem.diagnostics);
    console.error(problem ? `${problem.status} ${problem.code}: ${problem.detail}` : (error as Error).message);
    return 1;
  }
}

export const factoryCommand: CliCommand = { name: 'factory', usage: USAGE, run };
