/**
 * Is a candidate configuration's pass rate better than the baseline's by more than chance? The
 * comparison as the API answers it, by Fisher's exact test (./stats.ts).
 */
import { z } from 'zod';
import { fisherExactTwoSided } from './stats.js';

/** Candidates are compared with the baseline at this family-wise level (Bonferroni across candidates). */
const ALPHA = 0.05;

export const comparisonResource = z.object({
  baseline_uid: z.string(),
  candidate_uid: z.string(),
  baseline: z.object({ pass_count: z.int(), trial_count: z.int(), pass_rate: z.number().nullable() }),
  candidate: z.object({ pass_count: z.int(), trial_count: z.int(), pass_rate: z.number().nullable() }),
  difference: z.number().nullable().describe('Candidate pass rate minus baseline pass rate'),
  method: z.literal('fisher_exact_two_sided'),
  p_value: z.number().nullable(),
  alpha: z.number().describe('0.05 divided by the number of candidates compared (Bonferroni)'),
  significant: z.boolean(),
  verdict: z.enum(['candidate_better', 'baseline_better', 'no_significant_difference', 'insufficient_data']),
});

export type Comparison = z.infer<typeof comparisonResource>;

/**
 * Whether a candidate's pass rate differs from the baseline's by more than chance: Fisher's exact
 * test, two-sided, on the scored trials (pass against fail), at ALPHA divided by the number of
 * candidates. Insufficient data while either side has no scored trial.
 */
export function compare(
  baseline: { uid: string; pass: number; fail: number },
  candidate: { uid: string; pass: number; fail: number },
  candidates: number,
): Comparison {
  const n = baseline.pass + baseline.fail;
  const m = candidate.pass + candidate.fail;
  const alpha = ALPHA / Math.max(1, candidates);
  const side = (pass: number, count: number) => ({
    pass_count: pass,
    trial_count: count,
    pass_rate: count ? pass / count : null,
  });
  const base = {
    baseline_uid: baseline.uid,
    candidate_uid: candidate.uid,
    baseline: side(baseline.pass, n),
    candidate: side(candidate.pass, m),
    method: 'fisher_exact_two_sided' as const,
    alpha,
  };
  if (!n || !m) return { ...base, difference: null, p_value: null, significant: false, verdict: 'insufficient_data' };
  const difference = candidate.pass / m - baseline.pass / n;
  const p_value = fisherExactTwoSided(candidate.pass, m, baseline.pass, n);
  const significant = p_value < alpha;
  return {
    ...base,
    difference,
    p_value,
    significant,
    verdict: !significant ? 'no_significant_difference' : difference > 0 ? 'candidate_better' : 'baseline_better',
  };
}
