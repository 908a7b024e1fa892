/** The README's picture of the layers is the one dependency-cruiser reads from the code now. */
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { layerGraph } from '../helpers/layers.js';

it('README shows the layers as they are', () => {
  const readme = fs.readFileSync('README.md', 'utf8');
  expect(readme, 'run `npm run graph -- --write`').toContain(`\`\`\`mermaid\n${layerGraph()}\n\`\`\``);
});
