/**
 * The layers of the code and the imports between them, from dependency-cruiser's own reading
 * of the imports, as the Mermaid graph docs/architecture.md shows (`npm run graph` prints it; a
 * test keeps that copy current).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** The page that shows the graph. */
export const GRAPH_PAGE = 'docs/architecture.md';

const LAYERS: ReadonlyArray<[name: string, pattern: RegExp]> = [
  ['composition root<br>src/features.ts', /^src\/features\.ts$/],
  ['worker program<br>src/cli/worker', /^src\/cli\/worker\//],
  ['platform<br>src', /^src\//],
  ['feature entries<br>commands/*/index.ts', /^commands\/[^/]+\/index\.ts$/],
  ['events and public modules<br>commands/*/events.ts, public.ts', /^commands\/[^/]+\/(events|public)\.ts$/],
  ['write side<br>commands', /^commands\//],
  ['query side<br>queries', /^queries\//],
  ['read models<br>projections', /^projections\//],
];

const layerOf = (path: string) => LAYERS.findIndex(([, pattern]) => pattern.test(path));

export function layerGraph(): string {
  const out = execFileSync(
    'npx',
    [
      'depcruise',
      'src',
      'commands',
      'queries',
      'projections',
      '--include-only',
      '^(src|commands|queries|projections)/',
      '--output-type',
      'json',
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const { modules } = JSON.parse(out) as {
    modules: Array<{ source: string; dependencies: Array<{ resolved: string }> }>;
  };
  const edges = new Set<string>();
  for (const m of modules) {
    for (const d of m.dependencies) {
      const [from, to] = [layerOf(m.source), layerOf(d.resolved)];
      if (from >= 0 && to >= 0 && from !== to) edges.add(`  L${from} --> L${to}`);
    }
  }
  const nodes = LAYERS.map(([name], i) => `  L${i}["${name}"]`);
  return ['flowchart TD', ...nodes, ...[...edges].sort()].join('\n');
}

/** The page with its graph replaced by the current one. */
export const withGraph = (page: string, graph = layerGraph()): string =>
  page.replace(/```mermaid\nflowchart TD\n[\s\S]*?```/, `\`\`\`mermaid\n${graph}\n\`\`\``);

// `npm run graph` prints the graph; `npm run graph -- --write` puts it into GRAPH_PAGE.
if (process.argv[1]?.endsWith('layers.ts')) {
  if (process.argv.includes('--write')) fs.writeFileSync(GRAPH_PAGE, withGraph(fs.readFileSync(GRAPH_PAGE, 'utf8')));
  else console.log(layerGraph());
}
