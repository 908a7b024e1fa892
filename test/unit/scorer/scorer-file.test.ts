/** The scorer file form of reference notes 6.2: read under the API's rules, problems named by file keys, written back. */
import { describe, expect, it } from 'vitest';
import { readScorerFile, writeScorerFile } from '../../../commands/scorer/file-form.js';

// The task-compliance scorer of the notes' example factory (6.4).
const example = `---
agents: [implementer, reviewer]
labels:
  - value: compliant
    score: 1
  - value: partial
    score: 0.5
    description: Some of it
  - value: non_compliant
    score: 0
passingScore: 1
samplingRate: 25
model: claude-4-5-haiku
selfImprovement: true
---
Did the agent do what the task asked?
`;

describe('scorer files', () => {
  it('reads the example into a scorer of selected agents, and writes it back the same', () => {
    const { scorer, problems } = readScorerFile('task-compliance', example);
    expect(problems).toEqual([]);
    expect(scorer).toMatchObject({
      name: 'task-compliance',
      agent_names: ['implementer', 'reviewer'],
      fields: {
        scoring_prompt: 'Did the agent do what the task asked?',
        model_id: 'claude-4-5-haiku',
        threshold: 1,
        allowed_classifications: [
          { value: 'compliant', score: 1, description: null },
          { value: 'partial', score: 0.5, description: 'Some of it' },
          { value: 'non_compliant', score: 0, description: null },
        ],
        scope_mode: 'selected_agents',
        sampling_rate: 25,
        self_improvement: { enabled: true },
      },
    });
    const again = readScorerFile('x', writeScorerFile({ ...scorer!.fields, agents: [] }, scorer!.agent_names));
    expect(again.scorer?.fields).toEqual(scorer!.fields);
  });

  it.each([
    ['no front matter', 'Just a rubric', ''],
    ['duplicate keys', example.replace('passingScore: 1', 'passingScore: 1\npassingScore: 0.5'), ''],
    ['an empty rubric', example.replace('Did the agent do what the task asked?\n', ''), 'body'],
    ['no agents', example.replace('agents: [implementer, reviewer]', 'agents: []'), 'agents'],
    ['a rate of 0 (enabled: false says that)', example.replace('samplingRate: 25', 'samplingRate: 0'), 'samplingRate'],
    ['three decimals', example.replace('samplingRate: 25', 'samplingRate: 12.345'), 'samplingRate'],
    [
      'no label passing',
      example.replace('passingScore: 1', 'passingScore: 1\nlabels_extra: true').replace('score: 1\n', 'score: 0.9\n'),
      'labels',
    ],
    ['a label value twice', example.replace('value: partial', 'value: compliant'), 'labels'],
  ])('refuses %s, naming the file key', (_what, content, path) => {
    const { scorer, problems } = readScorerFile('s', content);
    expect(scorer).toBeNull();
    expect(problems.map((p) => p.path)).toContain(path);
  });

  it('takes enabled: false as judging nothing on its own, and keeps unknown keys out of the way', () => {
    const { scorer } = readScorerFile('s', example.replace('samplingRate: 25', 'enabled: false\nfutureKey: 1'));
    expect(scorer?.fields.sampling_rate).toBe(0);
    expect(writeScorerFile({ ...scorer!.fields, agents: [] }, ['a'])).toContain('enabled: false');
  });
});
