/** A factory's branches: propose definition files, validate them, see the plan, apply. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction, usePaged } from '../hooks';
import { Json, Time } from '../ui/format';
import { More } from '../ui/page';
import { ActionResult, Empty, Loading, ProblemView } from '../ui/status';

interface Diagnostic {
  code: string;
  message: string;
  path: string;
  line?: number;
}

interface Branch {
  uid: string;
  name: string;
  status: string;
  freshness: string;
  valid: boolean;
  diagnostics: Diagnostic[];
  changes: Record<string, unknown>;
  files: Array<{ path: string; size_bytes: number }>;
  updated_at: string;
}

function Diagnostics({ list }: { list: Diagnostic[] }) {
  if (list.length === 0) return <p class="said">Valid: no diagnostics.</p>;
  return (
    <ul class="diagnostics">
      {list.map((d, i) => (
        <li key={i}>
          <code>{d.code}</code> {d.path}
          {d.line ? `:${d.line}` : ''} — {d.message}
        </li>
      ))}
    </ul>
  );
}

function BranchItem({ factoryUid, branch, applied }: { factoryUid: string; branch: Branch; applied: () => void }) {
  const [state, apply] = useAction(
    () => api<Branch>(`/factory/${factoryUid}/branches/${branch.uid}/apply`, { method: 'POST', body: {} }),
    (b) =>
      `Branch ${b.name} applied: the factory's definition is now ${b.status === 'APPLIED' ? 'this branch' : b.status}.`,
  );
  return (
    <li class="card">
      <h3>
        {branch.name} <span class="badge">{branch.status}</span> <span class="badge">{branch.freshness}</span>
      </h3>
      <p class="muted">
        {branch.files.length} files · updated <Time iso={branch.updated_at} />
      </p>
      <h4>Validation</h4>
      <Diagnostics list={branch.diagnostics} />
      <details>
        <summary>Plan: what applying changes</summary>
        <Json value={branch.changes} label={`Plan of branch ${branch.name}`} />
      </details>
      {branch.status === 'OPEN' && (
        <button type="button" disabled={state.busy || !branch.valid} onClick={async () => (await apply()) && applied()}>
          Apply branch {branch.name}
        </button>
      )}
      <ActionResult state={state} />
    </li>
  );
}

function Propose({ factoryUid, proposed }: { factoryUid: string; proposed: () => void }) {
  const [name, setName] = useState('');
  const [path, setPath] = useState('factory.yaml');
  const [content, setContent] = useState('');
  const files = () => [{ path, content }];
  const [validation, validate] = useAction(
    () =>
      api<{ valid: boolean; diagnostics: Diagnostic[] }>('/factory-files/validate', {
        method: 'POST',
        body: { files: files() },
      }),
    (r) => (r.valid ? 'Valid.' : `Not valid: ${r.diagnostics.length} diagnostics.`),
  );
  const [proposal, propose] = useAction(
    () => api<Branch>(`/factory/${factoryUid}/branches`, { method: 'POST', body: { name, files: files() } }),
    (b) => `Branch ${b.name} proposed (${b.valid ? 'valid' : 'not valid'}).`,
  );
  return (
    <form class="card" onSubmit={async (e) => (e.preventDefault(), (await propose()) && proposed())}>
      <h3>Propose a branch</h3>
      <label for="branch-name">Branch name</label>
      <input id="branch-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="branch-path">File path</label>
      <input id="branch-path" required value={path} onInput={(e) => setPath(e.currentTarget.value)} />
      <label for="branch-content">File content</label>
      <textarea id="branch-content" rows={8} value={content} onInput={(e) => setContent(e.currentTarget.value)} />
      <div class="row">
        <button type="button" disabled={validation.busy} onClick={() => void validate()}>
          Validate
        </button>
        <button type="submit" disabled={proposal.busy}>
          Propose branch
        </button>
      </div>
      <ActionResult state={validation} />
      <ActionResult state={proposal} />
    </form>
  );
}

export function Branches({ factoryUid }: { factoryUid: string }) {
  const branches = usePaged<Branch>(`/factory/${factoryUid}/branches`, 'branches', (b) => b.uid, { limit: 20 });
  return (
    <section aria-labelledby="branches">
      <h2 id="branches">Branches</h2>
      {branches.problem && <ProblemView problem={branches.problem} />}
      {branches.loading && branches.items.length === 0 && <Loading what="Loading branches" />}
      {!branches.loading && !branches.problem && branches.items.length === 0 && (
        <Empty>No branches: propose the factory's definition files below.</Empty>
      )}
      <ul class="cards">
        {branches.items.map((b) => (
          <BranchItem key={b.uid} factoryUid={factoryUid} branch={b} applied={branches.refresh} />
        ))}
      </ul>
      <More {...branches} />
      <Propose factoryUid={factoryUid} proposed={branches.refresh} />
    </section>
  );
}
