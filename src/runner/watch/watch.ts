import { agentFilesFor, remoteEngineOf } from '../../sandbox/container/agent-files-for.js';
import { mkdir } from 'node:fs/promises';
import type { Instance } from '../../config/instance.js';
import { describeError, isCodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { sleep } from '../../util/sleep.js';
import { readPausedReason } from '../tick/paused.js';
import { Coalescer, watchFolder } from '../../mail/folder-watch.js';
import { PostOffice } from '../../mail/post-office.js';
import { ensureInbox, watchInbox } from '../../mail/inbox.js';
import { MailQueue } from '../../mail/mail-queue.js';
import type { DueWake, LoadedSchedule } from './schedule/schedule.js';
import { ScheduledWakes } from './schedule/scheduled-wakes.js';
import { tickEnvironment } from '../secrets/secrets.js';
import type { AgentStatus } from './service/status-api.js';
import { type SupervisorCounters, INITIAL_COUNTERS, supervisorPolicy, decideAfterTick, recordRestart, recordTickEnd, settleCounters } from './supervisor.js';
import { TickGate } from './limits/tick-gate.js';
import { describeNextWake, tickMessages } from './tick-messages.js';
import { Waker } from './waker.js';
import type { StartTickFn, WatchRunningTick, WatchTickResult } from './watch-tick.js';
import type { TickRetry } from '../tick/tick.js';

/**
 * The watch loop: one instance, ticks that never overlap, woken by inbox messages,
 * scheduled wakes, and the restart policy after a tick ends. Everything it reads (the
 * config, the schedule, the paused file, the secrets) is re-read before each tick, so
 * changes apply without restarting watch.
 */

export interface WatchDependencies {
  readonly startTick: StartTickFn;
  /** Re-resolve the instance (re-reads agent_config.json). */
  readonly loadInstance: () => Promise<Instance>;
  /**
   * Did the previous runner die in the middle of a tick, or did the last tick end abnormally?
   * A notice for the next tick; `diedMidTick` lets the restart policy restart at once.
   */
  readonly detectInterruptedTick?: (instance: Instance) => Promise<{ notice: string; diedMidTick: boolean } | undefined>;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** How often to re-read the inbox, the schedule and the paused file without an event. */
  readonly pollMs?: number;
}

type Trigger = 'message' | 'schedule' | 'restart';

type CurrentTick = NonNullable<AgentStatus['currentTick']>;
/** A tick under way: what the status API shows, and its handle once it has started. */
type TickInProgress = { readonly tick: CurrentTick; readonly running?: WatchRunningTick };

/** What watch is doing now (the status API's `state`): one of these at a time, each with only what it has. */
type WatchPhase =
  | { readonly kind: 'starting' }
  | { readonly kind: 'idle'; readonly reason?: string }
  | ({ readonly kind: 'ticking' } & TickInProgress)
  | { readonly kind: 'paused' | 'backoff' | 'limited' | 'config-error' | 'gave-up'; readonly reason: string }
  /** Nothing follows: a tick under way is being stopped. */
  | ({ readonly kind: 'stopping' } & Partial<TickInProgress>);

/** What the restart policy owes: nothing, a tick (once the backoff allows), or nothing until a stable period (its cap was reached). */
type RestartDue = { readonly kind: 'none' | 'pending' } | { readonly kind: 'gave-up'; readonly reason: string };
const NO_RESTART: RestartDue = { kind: 'none' };
const RESTART: RestartDue = { kind: 'pending' };

/** Watch waits for something to do in these: a message wakes it. */
const WAKEABLE: ReadonlySet<WatchPhase['kind']> = new Set(['starting', 'idle', 'gave-up']);

/** The same phase without the tick's handle: a tick that ended is handed nothing more. */
function withoutHandle(phase: WatchPhase): WatchPhase {
  if (phase.kind === 'ticking') return { kind: 'ticking', tick: phase.tick };
  return phase.kind === 'stopping' ? { kind: 'stopping' } : phase;
}

export class Watch {
  private instance: Instance;
  private readonly waker = new Waker();
  private readonly stopController = new AbortController();
  private readonly pollMs: number;
  private stepCount = 0;
  private readonly started = new Date();
  private phase: WatchPhase = { kind: 'starting' };
  private restart: RestartDue = NO_RESTART;
  private counters: SupervisorCounters = INITIAL_COUNTERS;
  /** No tick before this (epoch ms), whatever wakes it: the backoff after failures, a usage limit. */
  private notBefore = 0;
  private crashNotice: string | undefined;
  private lastResult: AgentStatus['lastResult'];
  private nextWakeInfo: AgentStatus['nextWake'];
  /** The running tick's retry, while its next attempt is due (tick.ts onRetry). */
  private retry: TickRetry | undefined;
  private lastConfigError: string | undefined;
  /** Messages and notes for the agent (mail-queue.ts), the outbox it sends from (post-office.ts), the schedule, the operator's limits. */
  private readonly mail: MailQueue;
  private readonly postOffice: PostOffice;
  private readonly schedule: ScheduledWakes;
  private readonly gate: TickGate;
  private readonly midTick = new Coalescer(() => this.deliverMidTick(), 250);
  private loopDone: Promise<void> | undefined;

  constructor(
    instance: Instance,
    private readonly deps: WatchDependencies,
  ) {
    this.instance = instance;
    this.pollMs = deps.pollMs ?? 2000;
    this.mail = new MailQueue(() => this.instance, deps.logger, deps.env);
    this.postOffice = new PostOffice({ instance: () => this.instance, logger: deps.logger, ...(deps.env ? { env: deps.env } : {}), pollMs: this.pollMs, files: agentFilesFor(instance, deps.env) });
    this.schedule = new ScheduledWakes(() => this.instance.paths, deps.logger);
    this.gate = new TickGate(deps.logger);
  }

  /** The running tick's handle, while it may be handed messages. */
  private get running(): WatchRunningTick | undefined {
    return 'running' in this.phase ? this.phase.running : undefined;
  }

  /** Move on to `next`; once stopping, watch stays so. */
  private enter(next: WatchPhase): void {
    if (this.phase.kind !== 'stopping') this.phase = next;
  }

  get log(): Logger {
    return this.deps.logger;
  }

  /** The status API's view of this instance. */
  status(): AgentStatus {
    const ticking = this.phase.kind === 'ticking';
    const retry = ticking ? this.retry : undefined;
    const retrying = retry !== undefined && Date.parse(retry.next_at) > Date.now();
    // While a tick runs, the next wake is its next attempt or nothing: never the wake that started it.
    const nextWake = retrying ? { time: retry.next_at, reason: `retry ${retry.attempt + 1} of ${retry.max_attempts}` } : ticking ? undefined : this.nextWakeInfo;
    const reason = retry
      ? retrying
        ? `attempt ${retry.attempt} of ${retry.max_attempts} failed: ${retry.cause.split('\n')[0]}; next try at ${retry.next_at}, retries end by ${retry.deadline}`
        : `attempt ${retry.attempt + 1} of ${retry.max_attempts} runs (attempt ${retry.attempt} failed: ${retry.cause.split('\n')[0]})`
      : 'reason' in this.phase && this.phase.reason
        ? this.phase.reason
        : undefined;
    return {
      name: this.instance.name,
      dataDir: this.instance.dataDir,
      harness: this.instance.config.runner.harness,
      state: retrying ? 'retrying' : this.phase.kind,
      running: ticking,
      paused: this.phase.kind === 'paused',
      ...(reason ? { reason } : {}),
      ...('tick' in this.phase && this.phase.tick ? { currentTick: this.phase.tick } : {}),
      ...(this.lastResult ? { lastResult: this.lastResult } : {}),
      ...(nextWake ? { nextWake } : {}),
      ...(retry ? { retry: { attempt: retry.attempt, maxAttempts: retry.max_attempts, cause: retry.cause, nextAt: retry.next_at, deadline: retry.deadline } } : {}),
      restarts: this.counters.restarts,
      failures: this.counters.failures,
      pendingMessages: this.mail.waiting,
      watchPid: process.pid,
      watchStarted: this.started.toISOString(),
    };
  }

  /** Start the loop. Resolves once it runs; `stopped` resolves when it has ended. */
  async start(): Promise<void> {
    await ensureInbox(this.instance.paths).catch((error: unknown) => this.log.error({ err: error }, `the inbox cannot be used: ${describeError(error)}`));
    const interrupted = await this.deps.detectInterruptedTick?.(this.instance).catch((error: unknown) => {
      this.log.warn({ err: error }, 'cannot tell whether the previous tick was interrupted (state.json unreadable)');
      return undefined;
    });
    if (interrupted) {
      this.crashNotice = interrupted.notice;
      this.log.warn({ notice: interrupted.notice }, 'the next tick gets a crash notice');
      // A restart policy that restarts failed ticks restarts this one too.
      if (interrupted.diedMidTick && this.instance.config.runner.restart !== 'no') this.restart = RESTART;
    }
    const inbox = watchInbox(this.instance.paths, () => this.onInboxChange(), this.pollMs);
    await mkdir(this.instance.paths.mail.queue, { recursive: true, mode: 0o700 });
    const queue = watchFolder(this.instance.paths.mail.queue, '.', () => this.onInboxChange(), this.pollMs);
    await this.postOffice.start().catch((error: unknown) => this.log.error({ err: error }, `the post office cannot start: ${describeError(error)}`));
    const remote = remoteEngineOf(this.instance, this.deps.env);
    // The post office reaches the volume there; the inbox is still read as a folder of this machine.
    if (remote !== undefined) this.log.warn({ engine: remote }, 'not available on a remote engine yet: the inbox (notes the agent leaves in <data>/inbox/); messages go through the post office (outbox/)');
    this.stopController.signal.addEventListener('abort', () => [inbox, queue].forEach((w) => w.close()), { once: true });
    this.loopDone = this.loop();
  }

  get stopped(): Promise<void> {
    return this.loopDone ?? Promise.resolve();
  }

  /** Stop: a running tick is stopped gracefully (the tick's SIGINT, grace period, kill). */
  async stop(): Promise<void> {
    if (!this.stopController.signal.aborted) {
      this.phase = 'tick' in this.phase && this.phase.tick ? { kind: 'stopping', tick: this.phase.tick, ...(this.running ? { running: this.running } : {}) } : { kind: 'stopping' };
      this.log.info('stopping watch');
      this.stopController.abort();
      this.waker.wake();
    }
    await this.stopped;
    await this.postOffice.stop();
  }

  /**
   * Something for the agent may have arrived (a flood calls this for every file: it only kicks).
   * Only an idle watch is woken: paused, backing off or held by a limit, a message changes nothing.
   */
  private onInboxChange(): void {
    if (this.running) this.midTick.kick();
    else if (WAKEABLE.has(this.phase.kind)) this.waker.wake();
    this.mail.refreshCount();
  }

  /** Hand what arrived to the running agent; what it cannot take waits for the next tick. */
  private async deliverMidTick(): Promise<void> {
    const running = this.running;
    if (!running) return;
    for (const text of await this.mail.next().catch((error: unknown) => {
      this.log.error({ err: error }, `the messages cannot be read: ${describeError(error)}`);
      return [];
    })) {
      if (this.running !== running) return;
      try {
        await running.deliver(text);
      } catch (error) {
        this.log.warn({ err: error }, 'could not hand a message to the running agent; it waits for the next tick');
        return;
      }
      this.mail.taken(text);
      this.log.info('a message was handed to the running agent');
    }
  }

  private async reloadInstance(): Promise<boolean> {
    try {
      this.instance = await this.deps.loadInstance();
      this.lastConfigError = undefined;
      return true;
    } catch (error) {
      const message = describeError(error);
      if (message !== this.lastConfigError) this.log.error({ err: error }, `the instance's config cannot be used; waiting for a fix: ${message}`);
      this.lastConfigError = message;
      this.enter({ kind: 'config-error', reason: message });
      return false;
    }
  }

  /** How many times watch has looked at the inbox, the schedule and the restart policy (one step each). */
  get steps(): number {
    return this.stepCount;
  }

  private async loop(): Promise<void> {
    const signal = this.stopController.signal;
    while (!signal.aborted) {
      try {
        await this.step();
        this.stepCount++;
      } catch (error) {
        // Nothing in one step may kill watch: log, wait, try again.
        this.log.error({ err: error }, `watch step failed: ${describeError(error)}`);
        await this.waker.wait(this.pollMs);
      }
    }
    await this.midTick.idle();
    this.phase = { kind: 'stopping' };
  }

  private async step(): Promise<void> {
    const signal = this.stopController.signal;
    if (!(await this.reloadInstance())) {
      await this.waker.wait(this.pollMs);
      return;
    }
    const pausedReason = await readPausedReason(this.instance.paths);
    if (pausedReason !== undefined) {
      this.mail.refreshCount();
      if (this.phase.kind !== 'paused') this.log.warn({ reason: pausedReason.split('\n')[0] }, `paused: no tick until kernel-runner resume ${this.instance.name}`);
      this.enter({ kind: 'paused', reason: pausedReason });
      await this.waker.wait(this.pollMs);
      return;
    }
    const now = Date.now();
    const policy = supervisorPolicy(this.instance.config.runner);
    const before = this.counters;
    this.counters = settleCounters(before, policy, now);
    if (this.restart.kind === 'gave-up' && this.counters !== before) {
      this.restart = policy.restart !== 'no' ? RESTART : NO_RESTART;
      this.log.info(`no failure for reset_after (${Math.round(policy.backoff.resetAfter / 1000)}s): restart counters reset, restarting`);
    }
    const messages = await this.mail.next();
    const schedule = await this.schedule.read();
    const wakeDue = schedule?.due && schedule.due.time.getTime() <= now ? schedule.due : undefined;
    const restartDue = this.restart.kind === 'pending';
    const trigger: Trigger | undefined = messages.length > 0 ? 'message' : wakeDue ? 'schedule' : restartDue ? 'restart' : undefined;

    this.nextWakeInfo = describeNextWake(schedule?.due, restartDue ? Math.max(now, this.notBefore) : undefined);
    const hold = trigger && now >= this.notBefore ? await this.gate.check(this.instance, now, this.mail.waiting) : undefined;
    if (trigger && now >= this.notBefore && !hold) {
      await this.runTick(trigger, messages, wakeDue, schedule?.loaded);
      return;
    }
    if (hold) this.enter({ kind: 'limited', reason: hold.reason });
    else if (trigger) {
      const cause = this.lastResult?.error ? ` (the last: ${this.lastResult.error.split('\n')[0]})` : '';
      this.enter({ kind: 'backoff', reason: `backing off after ${this.counters.failures} failed tick(s)${cause} until ${new Date(this.notBefore).toISOString()}` });
    }
    else if (this.restart.kind === 'gave-up') this.enter({ kind: 'gave-up', reason: this.restart.reason });
    else this.enter({ kind: 'idle', ...(this.schedule.error ? { reason: `schedule.json ignored: ${this.schedule.error}` } : {}) });
    const until = Math.min(trigger ? Math.max(this.notBefore, hold?.until ?? 0) : Infinity, schedule?.due ? schedule.due.time.getTime() : Infinity, now + this.pollMs);
    // Held by a limit, new messages change nothing: only time (or a stop) does, so a flood does not spin the loop.
    if (hold) await sleep(until - now, signal);
    else if (!signal.aborted) await this.waker.wait(until - now);
  }

  private async runTick(trigger: Trigger, messages: readonly string[], wake: DueWake | undefined, schedule: LoadedSchedule | undefined): Promise<void> {
    const policy = supervisorPolicy(this.instance.config.runner);
    const texts = tickMessages({ crashNotice: this.crashNotice, wake, restart: trigger === 'restart', messages });

    const env = await tickEnvironment(this.instance, this.log, this.deps.env);
    // Stopped while this step looked: no new tick (a stop from here on reaches the tick).
    if (this.stopController.signal.aborted) return;
    const tickController = new AbortController();
    const onStop = () => tickController.abort();
    this.stopController.signal.addEventListener('abort', onStop, { once: true });
    const startedAt = Date.now();
    const tick: CurrentTick = { started: new Date(startedAt).toISOString(), trigger };
    this.enter({ kind: 'ticking', tick });
    if (trigger === 'restart') this.counters = recordRestart(this.counters, startedAt);
    if (this.restart.kind === 'pending') this.restart = NO_RESTART;
    this.log.info({ trigger, messages: messages.length, wake: wake?.spec }, `starting a tick (${trigger})`);

    let result: WatchTickResult;
    let tickNumber: number | undefined;
    try {
      let running: WatchRunningTick;
      try {
        const onInContext = (had: readonly string[]) => this.mail.inContext(had, tickNumber);
        const onRetry = (retry: TickRetry | undefined) => (this.retry = retry ?? this.retry);
        this.retry = undefined;
        running = await this.deps.startTick(this.instance, { logger: this.log, messages: texts, signal: tickController.signal, env, trigger, onInContext, onRetry });
      } catch (error) {
        // Not a failed tick: another runner holds the instance, or it was paused meanwhile. Try again later.
        if (isCodedError(error, 'TICK_RUNNING') || isCodedError(error, 'INSTANCE_PAUSED')) {
          this.log.warn({ err: error }, `no tick now: ${describeError(error)}`);
          this.enter({ kind: 'idle', reason: describeError(error) });
          if (trigger === 'restart') {
            this.restart = RESTART;
            this.counters = { ...this.counters, restarts: Math.max(0, this.counters.restarts - 1) };
          }
          this.notBefore = Date.now() + Math.max(this.pollMs, 5000);
          return;
        }
        throw error;
      }
      tickNumber = running.tick;
      this.enter({ kind: 'ticking', tick: tickNumber !== undefined ? { ...tick, number: tickNumber } : tick, running });
      await this.gate.started(this.instance, new Date(startedAt), running.tick);
      // The tick has them now; they are delivered once its model has had them (onInContext).
      this.crashNotice = undefined;
      for (const message of messages) this.mail.taken(message);
      if (wake) await this.schedule.fired(wake, schedule);
      // Anything that arrived between reading the inbox and the start goes to the running agent.
      this.onInboxChange();
      result = await running.done;
    } catch (error) {
      result = { failed: true, status: isCodedError(error) ? error.code : 'error', error: describeError(error) };
    } finally {
      this.stopController.signal.removeEventListener('abort', onStop);
    }
    await this.midTick.idle();
    // The tick is over: nothing more is handed to it.
    this.phase = withoutHandle(this.phase);
    this.retry = undefined;
    await this.mail.endTick(result.tick ?? tickNumber).catch((error: unknown) => this.log.error({ err: error }, `the messages of the tick cannot be settled: ${describeError(error)}`));
    if (wake) this.schedule.tickEnded(startedAt);

    const ended = Date.now();
    tickNumber = result.tick ?? tickNumber;
    this.lastResult = {
      ...(tickNumber !== undefined ? { tick: tickNumber } : {}),
      status: result.status,
      ended: new Date(ended).toISOString(),
      durationMs: ended - startedAt,
      ...(result.error ? { error: result.error } : {}),
    };
    if (this.stopController.signal.aborted) {
      this.log.info({ result: this.lastResult }, 'tick stopped because watch is stopping');
      return;
    }
    if (result.failed) {
      const which = tickNumber !== undefined ? `tick ${tickNumber}` : 'the previous tick';
      this.crashNotice = `Notice: ${which} ended abnormally (${result.status}${result.error ? `: ${result.error}` : ''}). Check what it left unfinished.`;
    }
    this.counters = recordTickEnd(this.counters, result.failed, ended, policy);
    const decision = decideAfterTick(this.counters, result.failed, policy);
    this.restart = decision.restart ? RESTART : decision.gaveUp ? { kind: 'gave-up', reason: decision.reason } : NO_RESTART;
    this.notBefore = ended + Math.max(decision.delayMs, result.retryAfterMs ?? 0);
    const level = result.failed ? 'warn' : 'info';
    // A tick that paused the instance is followed by nothing until a person resumes it: say that, not the restart the policy would make.
    const pausedNow = await readPausedReason(this.instance.paths);
    if (pausedNow !== undefined) this.enter({ kind: 'paused', reason: pausedNow });
    else this.enter(this.restart.kind === 'gave-up' ? { kind: 'gave-up', reason: this.restart.reason } : { kind: 'idle' });
    const next = pausedNow === undefined ? decision.reason : `instance paused: no tick until kernel-runner resume ${this.instance.name} (agent-kernel doctor ${this.instance.name} shows the fix)`;
    this.log[level]({ result: this.lastResult, restarts: this.counters.restarts, failures: this.counters.failures }, `tick ended (${result.status}); ${next}`);
  }
}
