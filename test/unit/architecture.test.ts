/** The manual's picture of the layers is the one dependency-cruiser reads from the code now. */
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { GRAPH_PAGE, layerGraph } from '../helpers/layers.js';

it(`${GRAPH_PAGE} shows the layers as they are`, () => {
  const page = fs.readFileSync(GRAPH_PAGE, 'utf8');
  expect(page, 'run `npm run graph -- --write`').toContain(`\`\`\`mermaid\n${layerGraph()}\n\`\`\``);
});

it('projections apply an event or fail on it: none catches an error and drops what it could not apply', () => {
  // A projection that swallows an error would pass the totality test (test/api/projection-totality)
  // while its read model silently misses the event; failing sets it aside, where operators see it.
  const catching = fs
    .readdirSync('projections', { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .filter((f) => /\bcatch\b|\.catch\(/.test(fs.readFileSync(`projections/${f}`, 'utf8')));
  expect(catching).toEqual([]);
});
