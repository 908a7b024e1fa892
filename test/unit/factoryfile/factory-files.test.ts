/**
 * Validation of factory files on the example factory of reference notes §6.4 (fixtures), and a
 * small broken variant of it for each FF_* code, with the file, line and column it is reported at.
 */
import { describe, expect, it } from 'vitest';
import { validateFiles } from '../../../commands/factoryfile/validate.js';
import { DIAGNOSTIC_CODES } from '../../../commands/factoryfile/diagnostics.js';
import { asList, edit, type Files, fixture, variant } from '../../helpers/factory-files.js';

const example = fixture('sdlc-issue-to-pr');
const validate = (files: Files) => validateFiles(asList(files));
const at = (files: Files) =>
  validate(files).diagnostics.map(({ code, path, line, column }) => ({ code, path, line, column }));

const FACTORY = 'factory.yaml';
const SLACK_DMS = 'automations/slack-dms/automation.md';
const MERGED = 'automations/github-pr-closed-or-merged/automation.md';

describe('the example factory (reference notes §6.4)', () => {
  it('is valid, and resolves every resource with what it inherits', () => {
    const result = validate(example);
    expect(result.diagnostics).toEqual([]);
    expect(result.valid).toBe(true);
    const d = result.definition!;
    expect(d.agents.map((a) => a.name)).toEqual([
      'foreman',
      'implementer',
      'mobile-build',
      'reviewer',
      'spec',
      'triage',
    ]);
    expect(d.automations).toHaveLength(5);
    expect(d.runners.map((r) => r.name)).toEqual(['linux-build', 'linux-standard', 'macos-build']);
    expect(d.scorers.map((s) => s.name)).toEqual(['review-quality', 'task-compliance']);
    expect(d.factory).toMatchObject({ name: 'sdlc-issue-to-pr', alias: 'Acme', credential_strategy: 'EXECUTOR' });
    // agentDefaults -> agent: the implementer's runner overrides, its model is inherited.
    const implementer = d.agents.find((a) => a.name === 'implementer')!;
    expect(implementer.execution).toMatchObject({ runner: 'linux-build', harness: { type: 'oz', model: 'auto' } });
    expect(implementer.skills.map((s) => s.name)).toEqual(['testing-standards']);
    expect(d.agents.find((a) => a.name === 'triage')!.execution.runner).toBe('linux-standard');
    expect(d.runners.find((r) => r.name === 'macos-build')!.platform).toEqual({
      os: 'macos',
      arch: 'aarch64',
      docker_image: null,
      mac_version: '26',
    });
    // Only the service can check the scorers' model: listed, not judged.
    expect(result.state_dependent.map((r) => `${r.path} ${r.field} ${r.value}`)).toEqual([
      'scorers/review-quality/scorer.md model claude-4-5-haiku',
      'scorers/task-compliance/scorer.md model claude-4-5-haiku',
    ]);
  });

  it("inherits as the notes say: secrets replace, the factory's always apply; workerHost clears; model is the oz harness", () => {
    const files = variant(
      edit(
        example,
        FACTORY,
        'agentDefaults:\n  model: auto',
        'secrets: [ORG]\nagentDefaults:\n  model: auto\n  workerHost: pool-a\n  secrets: [DEFAULT]',
      ),
      {
        'agents/spec/agent.md':
          '---\nagentType: SPEC\nsecrets: [SPEC_ONLY]\nworkerHost: null\nharness:\n  type: claude\n  model: opus\n  auth:\n    source: managedSecret\n    secretName: ANTHROPIC\n---\nWrite specs.\n',
        'agents/triage/agent.md': '---\nagentType: TRIAGE\nmodel: gpt-5-4-mini\n---\nTriage.\n',
      },
    );
    const d = validate(files).definition!;
    const agent = (name: string) => d.agents.find((a) => a.name === name)!.execution;
    expect(agent('spec')).toMatchObject({
      secrets: ['ORG', 'SPEC_ONLY'],
      worker_host: null,
      harness: { type: 'claude', model: 'opus', auth: { source: 'managedSecret', secret_name: 'ANTHROPIC' } },
    });
    expect(agent('triage')).toMatchObject({
      secrets: ['ORG', 'DEFAULT'],
      worker_host: 'pool-a',
      harness: { type: 'oz', model: 'gpt-5-4-mini' },
    });
  });
});

/** One broken variant per code, with where it is reported. */
const CASES: Array<[string, () => Files, Array<{ code: string; path: string; line: number; column: number }>]> = [
  [
    'FF_MISSING_FACTORY',
    () => variant(example, { [FACTORY]: null }),
    [{ code: 'FF_MISSING_FACTORY', path: FACTORY, line: 1, column: 1 }],
  ],
  [
    'FF_UNSUPPORTED_VERSION',
    () => edit(example, FACTORY, 'schemaVersion: v1alpha1', 'schemaVersion: v2'),
    [{ code: 'FF_UNSUPPORTED_VERSION', path: FACTORY, line: 2, column: 16 }],
  ],
  [
    'FF_UNSUPPORTED_PATH',
    () => variant(example, { 'agents/helper.md': '---\n---\nHelp.\n', 'runners/linux-gpu.yml': 'description: gpu\n' }),
    [
      { code: 'FF_UNSUPPORTED_PATH', path: 'agents/helper.md', line: 1, column: 1 },
      { code: 'FF_UNSUPPORTED_PATH', path: 'runners/linux-gpu.yml', line: 1, column: 1 },
    ],
  ],
  [
    'FF_DUPLICATE_PATH',
    () => variant(example, { 'automations/slack-dms.md': example[SLACK_DMS]! }),
    [{ code: 'FF_DUPLICATE_PATH', path: 'automations/slack-dms.md', line: 1, column: 1 }],
  ],
  [
    'FF_INVALID_DOCUMENT',
    () =>
      variant(example, {
        'runners/linux-build.yaml': '- npm ci\n- npm test\n',
        'runners/linux-standard.yaml': `${example['runners/linux-standard.yaml']}---\nmore: 1\n`,
      }),
    [
      { code: 'FF_INVALID_DOCUMENT', path: 'runners/linux-build.yaml', line: 1, column: 1 },
      { code: 'FF_INVALID_DOCUMENT', path: 'runners/linux-standard.yaml', line: 8, column: 1 },
    ],
  ],
  [
    'FF_MALFORMED_FRONTMATTER',
    () =>
      variant(example, {
        'agents/triage/agent.md': 'agentType: TRIAGE\n\nTriage.\n',
        'agents/spec/agent.md': '---\nagentType: SPEC\nWrite specs.\n',
      }),
    [
      { code: 'FF_MALFORMED_FRONTMATTER', path: 'agents/spec/agent.md', line: 1, column: 1 },
      { code: 'FF_MALFORMED_FRONTMATTER', path: 'agents/triage/agent.md', line: 1, column: 1 },
    ],
  ],
  [
    'FF_INVALID_YAML',
    () => edit(example, FACTORY, 'alias: Acme', 'alias: Acme: Corp'),
    [{ code: 'FF_INVALID_YAML', path: FACTORY, line: 7, column: 8 }],
  ],
  [
    'FF_INVALID_YAML (merge key, non-scalar key)',
    () => variant(example, { 'runners/linux-build.yaml': 'description: x\nplatform:\n  <<: {os: linux}\n[a, b]: 1\n' }),
    [
      { code: 'FF_INVALID_YAML', path: 'runners/linux-build.yaml', line: 3, column: 3 },
      { code: 'FF_INVALID_YAML', path: 'runners/linux-build.yaml', line: 4, column: 1 },
    ],
  ],
  [
    'FF_DUPLICATE_KEY',
    () => edit(example, FACTORY, 'alias: Acme', 'alias: Acme\nalias: Other'),
    [{ code: 'FF_DUPLICATE_KEY', path: FACTORY, line: 8, column: 1 }],
  ],
  [
    'FF_DUPLICATE_KEY (two MAIN/FOREMAN agents, a secret twice)',
    () =>
      edit(
        edit(example, 'agents/triage/agent.md', 'agentType: TRIAGE', 'agentType: MAIN'),
        FACTORY,
        'integrations:',
        'secrets: [GH, GH]\nintegrations:',
      ),
    [
      { code: 'FF_DUPLICATE_KEY', path: 'agents/triage/agent.md', line: 3, column: 12 },
      { code: 'FF_DUPLICATE_KEY', path: FACTORY, line: 16, column: 10 },
    ],
  ],
  [
    'FF_ANCHOR and FF_ALIAS',
    () =>
      edit(
        example,
        'runners/linux-build.yaml',
        'setupCommands:\n  - npm ci',
        'setupCommands: &setup\n  - npm ci\nx: *setup',
      ),
    [
      { code: 'FF_ANCHOR', path: 'runners/linux-build.yaml', line: 2, column: 16 },
      { code: 'FF_ALIAS', path: 'runners/linux-build.yaml', line: 4, column: 4 },
    ],
  ],
  [
    'FF_TAG',
    () => edit(example, FACTORY, 'alias: Acme', 'alias: !!str Acme'),
    [{ code: 'FF_TAG', path: FACTORY, line: 7, column: 8 }],
  ],
  [
    'FF_UNKNOWN_FIELD',
    () => edit(example, 'agents/spec/agent.md', 'agentType: SPEC', 'agentType: SPEC\nmodle: gpt-5-4-high'),
    [{ code: 'FF_UNKNOWN_FIELD', path: 'agents/spec/agent.md', line: 4, column: 1 }],
  ],
  [
    'FF_MISSING_REQUIRED',
    () => edit(example, FACTORY, '  model: auto\n', ''),
    [{ code: 'FF_MISSING_REQUIRED', path: FACTORY, line: 19, column: 1 }],
  ],
  [
    'FF_TYPE_MISMATCH',
    () => edit(example, 'scorers/review-quality/scorer.md', 'passingScore: 1', 'passingScore: high'),
    [{ code: 'FF_TYPE_MISMATCH', path: 'scorers/review-quality/scorer.md', line: 10, column: 15 }],
  ],
  [
    'FF_INVALID_VALUE',
    () => edit(example, 'runners/macos-build.yaml', 'memoryGb: 14', 'memoryGb: 16'),
    [{ code: 'FF_INVALID_VALUE', path: 'runners/macos-build.yaml', line: 2, column: 1 }],
  ],
  [
    'FF_INVALID_VALUE (model and harness both)',
    () =>
      edit(
        example,
        'agents/spec/agent.md',
        'agentType: SPEC',
        'agentType: SPEC\nmodel: auto\nharness:\n  type: claude',
      ),
    [{ code: 'FF_INVALID_VALUE', path: 'agents/spec/agent.md', line: 2, column: 1 }],
  ],
  [
    'FF_INVALID_REFERENCE',
    () =>
      edit(
        edit(example, 'agents/implementer/agent.md', 'runner: linux-build', 'runner: linux-huge'),
        'scorers/task-compliance/scorer.md',
        '  - implementer',
        '  - implementor',
      ),
    [
      { code: 'FF_INVALID_REFERENCE', path: 'agents/implementer/agent.md', line: 4, column: 9 },
      { code: 'FF_INVALID_REFERENCE', path: 'scorers/task-compliance/scorer.md', line: 4, column: 5 },
    ],
  ],
  [
    'FF_INVALID_MCP',
    () =>
      edit(
        example,
        'agents/spec/agent.md',
        'agentType: SPEC',
        'agentType: SPEC\nmcpServers:\n  linear:\n    url: https://mcp.example.com',
      ),
    [
      { code: 'FF_INVALID_MCP', path: 'agents/spec/agent.md', line: 5, column: 3 },
      { code: 'FF_INVALID_MCP', path: 'agents/spec/agent.md', line: 6, column: 5 },
    ],
  ],
  [
    'FF_INVALID_TRIGGER',
    () => edit(example, SLACK_DMS, 'provider: slack', 'provider: discord'),
    [{ code: 'FF_INVALID_TRIGGER', path: SLACK_DMS, line: 3, column: 15 }],
  ],
  [
    'FF_INVALID_EVENT',
    () => edit(example, SLACK_DMS, 'event: message_dm', 'event: message_sent'),
    [{ code: 'FF_INVALID_EVENT', path: SLACK_DMS, line: 4, column: 12 }],
  ],
  [
    'FF_INVALID_FILTER',
    () =>
      edit(
        example,
        MERGED,
        '      labels: ["factory:Acme"]\n  - provider: github',
        '      labels: ["factory:Acme"]\n      branch: [main]\n  - provider: github',
      ),
    [{ code: 'FF_INVALID_FILTER', path: MERGED, line: 8, column: 7 }],
  ],
];

describe('each FF_* code, provoked by a small broken variant, where it stands', () => {
  it.each(CASES)('%s', (_name, make, expected) => {
    const result = validate(make());
    expect(result.valid).toBe(false);
    expect(result.definition).toBeNull();
    expect(at(make())).toEqual(expected);
    for (const d of result.diagnostics) expect(d.message.length).toBeGreaterThan(0);
  });

  it('covers every code', () => {
    const provoked = new Set(CASES.flatMap(([, , expected]) => expected.map((e) => e.code)));
    expect([...provoked].sort()).toEqual([...DIAGNOSTIC_CODES].sort());
  });
});

describe('the rules across files', () => {
  it('wants exactly one MAIN/FOREMAN agent', () => {
    const none = edit(example, 'agents/foreman/agent.md', 'agentType: FOREMAN', 'agentType: CUSTOM');
    expect(validate(none).diagnostics).toMatchObject([
      { code: 'FF_MISSING_REQUIRED', path: FACTORY, message: expect.stringMatching(/MAIN or FOREMAN/) },
    ]);
  });

  it('wants a prompt for each automation and a rubric for each scorer', () => {
    const files = variant(example, {
      [SLACK_DMS]: example[SLACK_DMS]!.replace(/---\n[^-]*$/, '---\n'),
      'scorers/review-quality/scorer.md': example['scorers/review-quality/scorer.md']!.replace(/---\n[^-]*$/s, '---\n'),
    });
    expect(at(files).map((d) => `${d.path} ${d.code}`)).toEqual([
      `${SLACK_DMS} FF_MISSING_REQUIRED`,
      'scorers/review-quality/scorer.md FF_MISSING_REQUIRED',
    ]);
  });

  it("checks a scorer by the scorers API's own rules (its file form), and benchmark tasks against their suite", () => {
    const files = variant(example, {
      'scorers/review-quality/scorer.md': example['scorers/review-quality/scorer.md']!.replace(
        'score: 0\n',
        'score: 1\n',
      ),
      'benchmarks/checkout/suite.yaml': 'name: Checkout\nagent: implementer\ntasks: [refund, missing]\n',
      'benchmarks/checkout/tasks/refund.yaml': 'title: Refund\nprompt: Add refunds.\nsuccessCriteria: Refunds work.\n',
      'benchmarks/checkout/tasks/extra.yaml': 'title: Extra\nprompt: p\nsuccessCriteria: s\n',
    });
    expect(at(files).map((d) => `${d.path}:${d.line}:${d.column} ${d.code}`)).toEqual([
      'benchmarks/checkout/suite.yaml:3:17 FF_INVALID_REFERENCE',
      'benchmarks/checkout/tasks/extra.yaml:1:1 FF_INVALID_REFERENCE',
      'scorers/review-quality/scorer.md:5:1 FF_INVALID_VALUE',
    ]);
    const twice = edit(example, 'scorers/review-quality/scorer.md', 'value: shallow', 'value: helpful');
    expect(validate(twice).diagnostics).toMatchObject([
      {
        code: 'FF_DUPLICATE_KEY',
        path: 'scorers/review-quality/scorer.md',
        line: 5,
        column: 1,
        message: expect.stringMatching(/unique/),
      },
    ]);
  });

  it("refuses a credential header as a webhook's delivery id header, with the webhook feature's own rule", () => {
    const files = variant(example, {
      'webhooks/deploys.yaml':
        'authMode: signature\nsignatureScheme: github\nsecretName: DEPLOY_HOOK\ndeliveryIdHeader: X-Hub-Signature\n',
    });
    expect(at(files)).toEqual([{ code: 'FF_INVALID_VALUE', path: 'webhooks/deploys.yaml', line: 4, column: 19 }]);
    const ok = variant(example, {
      'webhooks/deploys.yaml': 'authMode: signature\nsignatureScheme: github\nsecretName: DEPLOY_HOOK\n',
    });
    expect(validate(ok).definition!.webhooks).toEqual([
      {
        name: 'deploys',
        path: 'webhooks/deploys.yaml',
        auth_mode: 'signature',
        signature_scheme: 'github',
        secret_name: 'DEPLOY_HOOK',
        delivery_id_header: null,
        enabled: true,
      },
    ]);
  });

  it('refuses a document nested past 64 levels as a diagnostic, before any parser recursion', () => {
    for (const [content, line, column] of [
      ['['.repeat(200_000), 1, 65],
      ['- '.repeat(100_000), 1, 1],
      [`a:\n${Array.from({ length: 5000 }, (_, i) => `${' '.repeat(i + 1)}b:`).join('\n')}`, 130, 1],
    ] as const) {
      const files = variant(example, { 'runners/linux-build.yaml': content });
      expect(at(files)).toEqual([{ code: 'FF_INVALID_YAML', path: 'runners/linux-build.yaml', line, column }]);
    }
    // Brackets inside quotes and comments are not nesting.
    const quoted = edit(example, 'runners/linux-build.yaml', 'npm ci', `"${'['.repeat(100)}" # ${'{'.repeat(100)}`);
    expect(validate(quoted).valid).toBe(true);
  });

  it("ignores documentation beside the resources, and keeps a skill's supporting files", () => {
    const files = variant(example, {
      'README.md': '# Acme',
      'agents/README.md': 'The agents.',
      'skills/repository-conventions/scripts/check.sh': 'echo ok',
    });
    expect(validate(files).valid).toBe(true);
  });
});
