/** A branch's files: validated and stored as blobs (the content its events record), and read back. */
import type { Runtime } from '../../src/runtime.js';
import { canonicalJson, type FactoryFile, resourceHashes, sha256, validateFiles } from '../factoryfile/public.js';
import type { BranchContent } from './events.js';

/** Diagnostics kept in a branch's events (the count says how many there were). */
export const MAX_STORED_DIAGNOSTICS = 100;

/** Validates files and stores them as blobs: the content a branch event records. */
export async function contentOf(
  rt: Runtime,
  files: readonly FactoryFile[],
  baseVersion: number,
): Promise<BranchContent> {
  const validation = validateFiles(files);
  const stored = [];
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const bytes = Buffer.from(f.content, 'utf8');
    stored.push({ path: f.path, sha256: await rt.blobs.put(bytes), size_bytes: bytes.length });
  }
  return {
    files: stored,
    content_hash: sha256(canonicalJson(stored.map((f) => [f.path, f.sha256]))),
    schema_version: validation.schema_version,
    valid: validation.valid,
    diagnostics: validation.diagnostics.slice(0, MAX_STORED_DIAGNOSTICS),
    diagnostic_count: validation.diagnostics.length,
    resources: validation.definition ? resourceHashes(validation.definition) : {},
    base_version: baseVersion,
  };
}

/** The files of a branch, read back from their blobs. */
export async function filesOf(rt: Runtime, content: BranchContent): Promise<FactoryFile[]> {
  return Promise.all(
    content.files.map(async (f) => {
      const bytes = await rt.blobs.read(f.sha256);
      if (!bytes) throw new Error(`the blob ${f.sha256} of ${f.path} is missing`);
      return { path: f.path, content: bytes.toString('utf8') };
    }),
  );
}
