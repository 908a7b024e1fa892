/**
 * Judge runs (source RUN_SCORER) for a command-line judge: the rubric, the allowed
 * classifications and the conversation are written to files the command is told of, and the
 * command prints one JSON object, `{"classification": "...", "reasoning": "..."}`, which the
 * worker reports as the run's judgement. A judge's output is never recorded as conversation: its
 * reasoning goes to the judgement alone, where the server seals it with its scorer.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Assignment, WorkerClient } from './client.js';

/** What a judge's stdout may hold at most: more is cut (the answer is expected at its end). */
export const MAX_JUDGE_OUTPUT = 1024 * 1024;

const FILES: Record<string, string> = {
  'rubric.md': 'SHOPFLOOR_JUDGE_RUBRIC_FILE',
  'classifications.json': 'SHOPFLOOR_JUDGE_CLASSIFICATIONS_FILE',
  'conversation.json': 'SHOPFLOOR_JUDGE_CONVERSATION_FILE',
};

/** Downloads the judge's files into `dir/judge` and returns the environment naming them. */
export async function prepareJudge(
  client: WorkerClient,
  run: Assignment,
  dir: string,
): Promise<Record<string, string>> {
  const into = path.join(dir, 'judge');
  await fs.promises.mkdir(into);
  const env: Record<string, string> = { SHOPFLOOR_RUN_KIND: 'judge' };
  for (const a of run.attachments) {
    const variable = FILES[a.file_name];
    if (!variable) continue;
    const file = path.join(into, a.file_name);
    await fs.promises.writeFile(file, await client.download(a.download_url));
    env[variable] = file;
  }
  return env;
}

export interface Judgement {
  classification: string;
  reasoning?: string;
}

const judgementIn = (text: string): Judgement | null => {
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Judgement).classification === 'string') {
      const { classification, reasoning } = v as Judgement;
      return { classification, ...(typeof reasoning === 'string' ? { reasoning } : {}) };
    }
  } catch {
    // not this one
  }
  return null;
};

/** The JSON object a judge printed: its whole output, else its last line that is one. */
export function parseJudgement(stdout: string): Judgement | null {
  const whole = judgementIn(stdout.trim());
  if (whole) return whole;
  const lines = stdout.split('\n').map((l) => l.trim());
  for (let i = lines.length - 1; i >= 0; i--) {
    const found = lines[i]!.startsWith('{') ? judgementIn(lines[i]!) : null;
    if (found) return found;
  }
  return null;
}
