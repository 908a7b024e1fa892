/**
 * Statistics for comparing pass rates: Fisher's exact test on a 2×2 table, computed with
 * log-factorials so that it stays exact (to floating point) for thousands of trials.
 */

const logFactorials: number[] = [0];

function logFactorial(n: number): number {
  for (let i = logFactorials.length; i <= n; i++) logFactorials.push(logFactorials[i - 1]! + Math.log(i));
  return logFactorials[n]!;
}

const logChoose = (n: number, k: number) => logFactorial(n) - logFactorial(k) - logFactorial(n - k);

/**
 * The two-sided p-value of Fisher's exact test for `a` successes of `n` against `b` of `m`: the
 * probability, with the margins fixed (a+b successes among n+m trials, n of them in the first
 * group) and no difference between the groups, of a table as unlikely as the one observed or less
 * (hypergeometric probabilities at most the observed one, with a relative tolerance of 1e-7).
 */
export function fisherExactTwoSided(a: number, n: number, b: number, m: number): number {
  const successes = a + b;
  const total = n + m;
  const logDenominator = logChoose(total, successes);
  const probability = (k: number) => Math.exp(logChoose(n, k) + logChoose(m, successes - k) - logDenominator);
  const observed = probability(a);
  let p = 0;
  for (let k = Math.max(0, successes - m); k <= Math.min(n, successes); k++) {
    const pk = probability(k);
    if (pk <= observed * (1 + 1e-7)) p += pk;
  }
  return Math.min(1, p);
}
