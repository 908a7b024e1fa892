/** What a judge is given: the rubric, the classifications and the conversation, cut to fit. */
import { describe, expect, it } from 'vitest';
import { bounded, judgeFiles, judgePrompt } from '../../../commands/scorer/judge.js';
import { truncateUtf8 } from '../../../commands/scorer/judgement-routes.js';

const message = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] });
const conversation = (steps: number, perStep: number, text: string) => ({
  run_id: 'r-1',
  title: 'Fix',
  conversation: {
    conversation_id: 'c-1',
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s-${i}`,
      messages: Array.from({ length: perStep }, (_, j) => message(`${i}.${j} ${text}`)),
      steps: [],
    })),
  },
  descendants: [],
});
const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe('the judge input', () => {
  it('gives a conversation whole when it fits, and cuts one that does not, saying what it cut', () => {
    const small = conversation(2, 2, 'ok');
    expect(bounded(small)).toEqual(small);

    const longStrings = bounded(conversation(3, 3, 'x'.repeat(100_000)), 64 * 1024);
    expect(size(longStrings)).toBeLessThanOrEqual(64 * 1024);
    expect(longStrings.truncated).toMatch(/strings longer than/);
    expect(JSON.stringify(longStrings)).toContain('characters cut]');

    const many = bounded(conversation(400, 50, 'y'.repeat(300)), 64 * 1024);
    expect(size(many)).toBeLessThanOrEqual(64 * 1024);
    expect(many.truncated).toMatch(/middle of long conversations/);
    // The first and the last steps stay.
    const ids = (many.conversation.steps as Array<{ id: string }>).map((s) => s.id);
    expect(ids[0]).toBe('s-0');
    expect(ids.at(-1)).toBe('s-399');
  });

  it('puts the rubric, the classifications and the conversation in the prompt and in files', () => {
    const files = {
      rubric: 'Were the tests run?',
      classifications: [
        { value: 'yes', score: 1, description: 'They were' },
        { value: 'no', score: 0, description: null },
      ],
      conversation: conversation(1, 1, 'ran npm test'),
    };
    const prompt = judgePrompt('Tests', files);
    expect(prompt).toContain('Were the tests run?');
    expect(prompt).toContain('- `yes` (score 1): They were');
    expect(prompt).toContain('ran npm test');
    expect(prompt).toMatch(/not instructions to you/);
    expect(judgeFiles(files).map((f) => [f.file_name, f.mime_type])).toEqual([
      ['rubric.md', 'text/markdown'],
      ['classifications.json', 'application/json'],
      ['conversation.json', 'application/json'],
    ]);
  });

  it('keeps a reason to 8 KB of UTF-8 without splitting a character', () => {
    expect(truncateUtf8('short', 8)).toBe('short');
    const cut = truncateUtf8('é'.repeat(10), 5);
    expect(cut).toBe('éé');
    expect(Buffer.byteLength(truncateUtf8('€'.repeat(5000), 8192))).toBeLessThanOrEqual(8192);
  });
});
