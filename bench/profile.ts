/**
 * `node --import tsx bench/profile.ts <file.cpuprofile | dir> [top] [--window FROM-TO]`: the hot spots of CPU
 * profiles written by BENCH_CPU_PROF=1 (or any --cpu-prof): self time per function, and
 * inclusive time per file of the project, as shares of the sampled time. `--window 20-32` keeps
 * the samples taken 20 to 32 seconds after the profile started (the HTTP workload logs each case's).
 */
import fs from 'node:fs';
import path from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const windowArg = args.indexOf('--window');
const [fromS, toS] = windowArg >= 0 ? args.splice(windowArg, 2)[1]!.split('-').map(Number) : [0, Infinity];

const where = (url: string) => {
  const rel = url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
  return rel.replace(/^.*node_modules\//, 'node_modules/') || '(native)';
};

function summarize(file: string, top: number): void {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (at >= fromS! * 1e6 && at <= toS! * 1e6) self.set(id, (self.get(id) ?? 0) + dt);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self].filter(([id]) =>
    /^\((idle|program|garbage collector)\)$/.test(byId.get(id)!.callFrame.functionName),
  );
  const busy =
    total - idle.filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0);

  const fn = new Map<string, number>();
  const fileIncl = new Map<string, number>();
  for (const [id, t] of self) {
    const f = byId.get(id)!.callFrame;
    const key = `${where(f.url)}:${f.functionName || '(anonymous)'}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    fn.set(key, (fn.get(key) ?? 0) + t);
    // Inclusive per project file: count each file once per sample stack.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const url = byId.get(cur)!.callFrame.url;
      if (!url || url.includes('node_modules') || url.startsWith('node:')) continue;
      const w = where(url);
      if (!seen.has(w)) seen.add(w), fileIncl.set(w, (fileIncl.get(w) ?? 0) + t);
    }
  }
  const share = (t: number) => `${((t * 100) / busy).toFixed(1).padStart(5)}%`;
  console.log(
    `\n${path.relative(process.cwd(), file)}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s not idle`,
  );
  console.log('  self time by function (share of non-idle time):');
  for (const [k, t] of [...fn]
    .filter(([k]) => !k.endsWith(':(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`  ${share(t)}  ${k}`);
  console.log('  inclusive time by project file:');
  for (const [k, t] of [...fileIncl].sort((a, b) => b[1] - a[1]).slice(0, Math.ceil(top / 2)))
    console.log(`  ${share(t)}  ${k}`);
}

const target = args[0];
if (!target) throw new Error('usage: bench/profile.ts <file.cpuprofile | dir> [top] [--window FROM-TO]');
const top = Number(args[1] ?? 25);
/** Main threads only: Node names profiles CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile. */
const mainThread = (f: string) => !/^CPU\.\d+\.\d+\.\d+\.[1-9]\d*\./.test(path.basename(f));
const walk = (p: string): string[] =>
  fs.statSync(p).isDirectory()
    ? fs.readdirSync(p).flatMap((f) => walk(path.join(p, f)))
    : p.endsWith('.cpuprofile')
      ? [p]
      : [];
const files = walk(target).filter(mainThread);
for (const f of files.sort()) summarize(f, top);
