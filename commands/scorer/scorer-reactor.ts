/**
 * What scoring does on its own, as reactors (ids derived from the causing event, so a replay
 * starts nothing twice):
 * - a finished run of a factory agent starts an automatic attempt of each scorer in scope that
 *   samples it;
 * - an attempt started creates its judge run, a RUN_SCORER run that the team's workers execute;
 * - a judge run that ends is recorded on the attempt (its time; what it cost is the cost ledger's),
 *   and fails it if no judgement came;
 * - a self-improvement check that chose failures creates its SELF_IMPROVEMENT run.
 */
import { createHash } from 'node:crypto';
import { DomainError } from '../../src/kernel/errors.js';
import { keyringFor } from '../../src/keyring.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { derivedId, reactionContext, reactor } from '../../src/projector/reactor.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { runsProjection, createRun, runState } from '../run/public.js';
import { scorersProjection } from '../../projections/scorer/scorers.js';
import type { RunEvent } from '../run/events.js';
import { type LiveScorer, scorerDecider } from './scorer-decider.js';
import {
  type JudgedRun,
  type ScorerEvent,
  type ScoringEvent,
  type SelfImprovementEvent,
  scorerKey,
  scorerStream,
  scoringStream,
  selfImprovementStream,
} from './events.js';
import { selfImprovementDecider } from './self-improvement-decider.js';
import { conversationReader, judgeFiles, judgePrompt } from './judge.js';
import { scoringDecider } from './scoring-decider.js';

/** Run states whose runs are judged: what the agent did, not what the platform did to it (ERROR, CANCELLED). */
const JUDGED_STATES = ['SUCCEEDED', 'FAILED', 'BLOCKED'];

/** Whether automatic scoring judges `runId` at `rate` percent: the same answer for a (scorer, run) every time. */
export function sampled(scorerUid: string, runId: string, rate: number | null): boolean {
  if (rate === null) return true;
  if (rate <= 0) return false;
  const bucket = createHash('sha256').update(`${scorerUid}:${runId}`).digest().readUInt32BE(0) % 10_000;
  return bucket < Math.round(rate * 100);
}

/** The scope agent of `scorer` that executed a run by `agentUid`, if it is in scope. */
export function inScope(scorer: Pick<LiveScorer, 'scope_mode' | 'agents'>, agentUid: string) {
  if (scorer.scope_mode === 'all_agents') return { uid: agentUid, include_descendants: false };
  return scorer.agents.find((a) => a.uid === agentUid) ?? null;
}

const scorersActor = { type: 'system' as const, uid: 'scorers' };

/** A judged run as an attempt records it; null when the run is not one a scorer may judge. */
export async function judgedRunOf(
  rt: Runtime,
  runId: string,
): Promise<(Omit<JudgedRun, 'include_descendants'> & { source: string }) | null> {
  const run = await runState(rt, runId);
  if (!run) return null;
  const c = run.created;
  if (!c.factory_uid || !c.agent_identity_uid || !c.team_uid) return null;
  return {
    run_id: c.run_id,
    factory_uid: c.factory_uid,
    team_uid: c.team_uid,
    agent_uid: c.agent_identity_uid,
    conversation_id: c.conversation_id,
    conversation_title: c.title,
    source: c.source,
  };
}

/** Finished runs start automatic attempts; ended judge runs close theirs. */
export const scoringTriggersReactor = reactor<RunEvent, Runtime>({
  name: 'scoring_triggers',
  replay: 'after-last-effect',
  on: {
    RunFinished: async (event, rt) => {
      const run = await runState(rt, event.data.run_id);
      if (!run) return;
      if (run.created.source === 'RUN_SCORER') return endJudgeRun(rt, event, event.data.state);
      if (!JUDGED_STATES.includes(event.data.state)) return;
      await startAutomaticAttempts(rt, event);
    },
    RunCancelled: (event, rt) => endJudgeRun(rt, event, 'CANCELLED'),
    RunWorkerLost: (event, rt) => (event.data.requeued ? Promise.resolve() : endJudgeRun(rt, event, 'ERROR')),
  },
});

async function startAutomaticAttempts(rt: Runtime, event: RecordedEvent<RunEvent>) {
  const judged = await judgedRunOf(rt, event.data.run_id);
  // Benchmark trials are judged by the scorers their benchmark run selected (commands/benchmark).
  if (!judged || ['RUN_SCORER', 'SELF_IMPROVEMENT', 'BENCHMARK_TRIAL'].includes(judged.source)) return;
  const { source: _source, ...run } = judged;
  const scorers = await findAll(rt.readModel(scorersProjection), {
    filter: { factory_uid: run.factory_uid },
    sort: [
      ['created_at', 'asc'],
      ['id', 'asc'],
    ],
    limit: 100,
  });
  if (!scorers.length || !(await conversationReader(rt).hasConversation(run.run_id))) return;
  // Decided as of the run's finish, not of the reaction: a replay of the log (a new read store)
  // decides the same, and starts nothing for scorers made after the run finished.
  const finished = event.metadata.occurred_at;
  const context: CommandContext = { ...reactionContext(event, new Date(finished)), actor: scorersActor };
  for (const doc of scorers) {
    const scorer = await rt.state(scorerDecider, scorerStream(doc.uid));
    if (scorer.status !== 'live' || scorer.created_at > finished) continue;
    const agent = inScope(scorer, run.agent_uid);
    if (!agent || !sampled(scorer.uid, run.run_id, scorer.sampling_rate)) continue;
    await rt.execute(
      scoringStream(scorer.uid, run.run_id),
      scoringDecider,
      {
        type: 'StartAttempt',
        data: {
          ...run,
          include_descendants: agent.include_descendants,
          attempt_id: derivedId(event, `attempt:${scorer.uid}`),
          scorer_uid: scorer.uid,
          scorer_version: scorer.version,
          judge_run_id: derivedId(event, `judge:${scorer.uid}`),
          trigger: 'automatic',
          classifications: scorer.allowed_classifications,
        },
      },
      context,
    );
  }
}

async function endJudgeRun(rt: Runtime, event: RecordedEvent<RunEvent>, state: string) {
  const run = await runState(rt, event.data.run_id);
  const m = run?.created.metadata;
  if (run?.created.source !== 'RUN_SCORER' || !m?.scorer_uid || !m.scored_run_id || !m.scoring_attempt_id) return;
  const doc = await rt.readModel(runsProjection).get(run.run_id);
  await rt.execute(
    scoringStream(m.scorer_uid, m.scored_run_id),
    scoringDecider,
    {
      type: 'EndJudgeRun',
      data: {
        end_id: event.id,
        attempt_id: m.scoring_attempt_id,
        judge_run_id: run.run_id,
        state,
        run_time_ms: doc?.run_time_ms ?? 0,
      },
    },
    { ...reactionContext(event, rt.clock.now()), actor: scorersActor },
  );
}

/** The judge run's configuration: the scorer's model, and its overrides of the factory's defaults. */
const judgeConfig = (s: LiveScorer) => ({
  name: `Scorer: ${s.name}`.slice(0, 200),
  model_id: s.model_id,
  ...(s.agent_config.default_runner_uid ? { runner_id: s.agent_config.default_runner_uid } : {}),
  ...(s.agent_config.mcp_servers ? { mcp_servers: s.agent_config.mcp_servers } : {}),
  ...(s.agent_config.secrets ? { secrets: s.agent_config.secrets } : {}),
});

/** Each attempt started creates its judge run (once: with the id the attempt chose). */
export const judgeRunsReactor = reactor<ScoringEvent, Runtime>({
  name: 'judge_runs',
  replay: 'after-last-effect',
  on: {
    ScoringAttemptStarted: async (event, rt) => {
      const a = event.data;
      if (await runState(rt, a.judge_run_id)) return;
      const context: CommandContext = reactionContext(event, rt.clock.now());
      const fail = (error: string) =>
        rt.execute(
          scoringStream(a.scorer_uid, a.run_id),
          scoringDecider,
          { type: 'FailAttempt', data: { attempt_id: a.attempt_id, error } },
          { ...context, actor: scorersActor },
        );
      const scorer = await rt.state(scorerDecider, scorerStream(a.scorer_uid));
      if (scorer.status !== 'live') return void (await fail('the scorer was deleted'));
      const conversation = await conversationReader(rt).judged(a.run_id, a.include_descendants);
      if (!conversation) return void (await fail('the judged run is gone'));
      const rubric = a.criteria
        ? `${scorer.scoring_prompt}\n\n## Success criteria\n\n${a.criteria}`
        : scorer.scoring_prompt;
      const files = { rubric, classifications: a.classifications, conversation };
      try {
        await createRun(
          rt,
          {
            prompt: judgePrompt(scorer.name, files),
            title: `Judge ${scorer.name}: ${a.conversation_title}`.slice(0, 500),
            config: judgeConfig(scorer),
            team: true,
            interactive: false,
            mode: 'normal',
          },
          // The judge runs as whoever started the attempt: the scorers, or the person who dispatched it.
          { ...context, actor: event.metadata.actor },
          {
            source: 'RUN_SCORER',
            team_uid: a.team_uid,
            run_id: a.judge_run_id,
            factory_uid: a.factory_uid,
            automatic_metadata: {
              scorer_uid: a.scorer_uid,
              scored_run_id: a.run_id,
              scoring_attempt_id: a.attempt_id,
            },
            files: judgeFiles(files),
          },
        );
      } catch (error) {
        if (await runState(rt, a.judge_run_id)) return; // another process created it
        if (!(error instanceof DomainError)) throw error;
        await fail(`the judge run could not be started: ${error.message}`);
      }
    },
  },
});

/** A self-improvement check that chose failures starts its run (once: with the id it chose). */
export const selfImprovementRunsReactor = reactor<SelfImprovementEvent, Runtime>({
  name: 'self_improvement_runs',
  replay: 'after-last-effect',
  on: {
    SelfImprovementStarted: async (event, rt) => {
      const d = event.data;
      if (await runState(rt, d.run_id)) return;
      const context: CommandContext = { ...reactionContext(event, rt.clock.now()), actor: scorersActor };
      const scorer = await rt.state(scorerDecider, scorerStream(d.scorer_uid));
      const name = scorer.status === 'live' ? scorer.name : 'a deleted scorer';
      const lines = d.failures.map(
        (f) => `- run ${f.run_id}: classified \`${f.classification}\` (score ${f.score}) at ${f.scored_at}`,
      );
      const prompt = [
        `The scorer "${name}" failed ${d.failures.length} run(s) of agent ${d.agent_uid}. Find what they have in common and propose a fix: a change to the application, or to the factory's definition (the agent's prompt, skills or configuration).`,
        'Open a pull request with a "Regressions addressed" section that links the failing runs below.',
        '',
        '## Failing runs',
        '',
        ...lines,
        '',
        "The judges' reasons follow, for the worker only (they are sealed with the scorer and go when it is deleted).",
      ].join('\n');
      try {
        await createRun(
          rt,
          {
            prompt,
            title: `Self-improvement: ${name} (${d.failures.length} failure${d.failures.length > 1 ? 's' : ''})`.slice(
              0,
              500,
            ),
            team: true,
            interactive: false,
            mode: 'normal',
          },
          context,
          {
            source: 'SELF_IMPROVEMENT',
            team_uid: d.team_uid,
            run_id: d.run_id,
            factory_uid: d.factory_uid,
            automatic_metadata: { scorer_uid: d.scorer_uid, improved_agent_uid: d.agent_uid },
            ...(d.reasons_sealed
              ? {
                  sealed_context: {
                    subject: scorerKey(d.scorer_uid),
                    sealed: d.reasons_sealed,
                    withdrawn: "## Judges' reasons\n\n(withdrawn: the scorer was deleted)",
                  },
                }
              : {}),
          },
        );
      } catch (error) {
        if (await runState(rt, d.run_id)) return;
        if (!(error instanceof DomainError)) throw error;
        await rt.execute(
          selfImprovementStream(d.scorer_uid, d.agent_uid),
          selfImprovementDecider,
          {
            type: 'RefuseSelfImprovementRun',
            data: { scorer_uid: d.scorer_uid, agent_uid: d.agent_uid, run_id: d.run_id, error: error.message },
          },
          context,
        );
      }
    },
  },
});

/** A deleted scorer's key is destroyed (again, should the process that deleted it have died first). */
export const scorerKeysReactor = reactor<ScorerEvent, Runtime>({
  name: 'scorer_keys',
  // Its effect is outside the log (the key destroyed): every ScorerDeleted again, harmless.
  replay: 'all',
  on: {
    ScorerDeleted: async (event, rt) => keyringFor(rt.config).destroy(scorerKey(event.data.uid)),
  },
});
