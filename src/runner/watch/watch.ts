import { mkdir } from 'node:fs/promises';
import type { Instance } from '../../config/instance.js';
import { describeError, isKernelError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { sleep } from '../backoff.js';
import { readPausedReason } from '../paused.js';
import { Coalescer, watchFolder } from '../mail/folder-watch.js';
import { PostOffice } from '../mail/post-office.js';
import { ensureInbox, watchInbox } from './inbox.js';
import { MailQueue } from './mail-queue.js';
import { type DueWake, type LoadedSchedule, loadSchedule, nextWake, removeFiredWake } from './schedule.js';
import { tickEnvironment } from './secrets.js';
import type { AgentStatus, WatchState } from './status-api.js';
import { type SupervisorCounters, INITIAL_COUNTERS, supervisorPolicy, decideAfterTick, recordRestart, recordTickEnd, settleCounters } from './supervisor.js';
import { TickGate } from './tick-gate.js';
import { describeNextWake, tickMessages } from './tick-messages.js';
import { Waker } from './waker.js';

/**
 * The watch loop: one instance, ticks that never overlap, woken by inbox messages,
 * scheduled wakes, and the restart policy after a tick ends. Everything it reads (the
 * config, the schedule, the paused file, the secrets) is re-read before each tick, so
 * changes apply without restarting watch.
 */

/** What watch needs from a tick: how it is started, and what it reports at the end. */
export interface WatchTickOptions {
  readonly logger: Logger;
  /** Handed to the agent at the start of the tick (messages, the wake's note, a crash notice). */
  readonly messages: readonly string[];
  /** Aborting stops the tick gracefully (SIGINT, grace period, kill). */
  readonly signal: AbortSignal;
  /** Extra environment for the harness: secrets, then runner.env. */
  readonly env: Readonly<Record<string, string>>;
  /** What started the tick. */
  readonly trigger?: string;
  /** Told the messages (of `messages` or delivered) once the agent's model has had them: only then are they delivered. */
  readonly onInContext?: (messages: readonly string[]) => void;
}

export interface WatchTickResult {
  /** The tick failed (crash, timeout, error): drives the backoff, the restart policy and the next crash notice. */
  readonly failed: boolean;
  /** A one-word status for people ("normal", "abnormal", "error"...). */
  readonly status: string;
  readonly tick?: number;
  readonly error?: string;
  /** A usage limit the tick did not wait out: no tick before this long. */
  readonly retryAfterMs?: number;
}

export interface WatchRunningTick {
  readonly tick?: number;
  /** Hand a message to the running agent (mid-tick notification). */
  deliver(message: string): Promise<void> | void;
  readonly done: Promise<WatchTickResult>;
}

export type StartTickFn = (instance: Instance, options: WatchTickOptions) => Promise<WatchRunningTick>;

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

export class Watch {
  private instance: Instance;
  private readonly waker = new Waker();
  private readonly stopController = new AbortController();
  private readonly pollMs: number;
  private stepCount = 0;
  private readonly started = new Date();
  private state: WatchState = 'starting';
  private reason: string | undefined;
  private paused = false;
  private counters: SupervisorCounters = INITIAL_COUNTERS;
  private restartPending = false;
  private notBefore = 0;
  private crashNotice: string | undefined;
  private gaveUp = false;
  private current: { number?: number; started: string; trigger: string } | undefined;
  private lastResult: AgentStatus['lastResult'];
  private nextWakeInfo: AgentStatus['nextWake'];
  private scheduleCursor = new Date();
  private lastScheduleError: string | undefined;
  private lastConfigError: string | undefined;
  /** One-shot wakes already fired by this process (in case the file could not be rewritten). */
  private readonly firedOneShots = new Set<string>();
  private running: WatchRunningTick | undefined;
  /** Messages and notes for the agent (mail-queue.ts), the outbox it sends from (post-office.ts), the operator's limits. */
  private readonly mail: MailQueue;
  private readonly postOffice: PostOffice;
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
    this.postOffice = new PostOffice({ instance: () => this.instance, logger: deps.logger, ...(deps.env ? { env: deps.env } : {}), pollMs: this.pollMs });
    this.gate = new TickGate(deps.logger);
  }

  get log(): Logger {
    return this.deps.logger;
  }

  /** The status API's view of this instance. */
  status(): AgentStatus {
    return {
      name: this.instance.name,
      dataDir: this.instance.dataDir,
      harness: this.instance.config.runner.harness,
      state: this.state,
      running: this.state === 'ticking',
      paused: this.paused,
      ...(this.reason ? { reason: this.reason } : {}),
      ...(this.current ? { currentTick: this.current } : {}),
      ...(this.lastResult ? { lastResult: this.lastResult } : {}),
      ...(this.nextWakeInfo ? { nextWake: this.nextWakeInfo } : {}),
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
      if (interrupted.diedMidTick && this.instance.config.runner.restart !== 'no') this.restartPending = true;
    }
    const inbox = watchInbox(this.instance.paths, () => this.onInboxChange(), this.pollMs);
    await mkdir(this.instance.paths.mail.queue, { recursive: true, mode: 0o700 });
    const queue = watchFolder(this.instance.paths.mail.queue, '.', () => this.onInboxChange(), this.pollMs);
    await this.postOffice.start().catch((error: unknown) => this.log.error({ err: error }, `the post office cannot start: ${describeError(error)}`));
    this.stopController.signal.addEventListener('abort', () => [inbox, queue].forEach((w) => w.close()), { once: true });
    this.loopDone = this.loop();
  }

  get stopped(): Promise<void> {
    return this.loopDone ?? Promise.resolve();
  }

  /** Stop: a running tick is stopped gracefully (the tick's SIGINT, grace period, kill). */
  async stop(): Promise<void> {
    if (!this.stopController.signal.aborted) {
      this.state = 'stopping';
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
    else if (this.state === 'idle' || this.state === 'gave-up' || this.state === 'starting') this.waker.wake();
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
      this.state = 'config-error';
      this.reason = message;
      return false;
    }
  }

  private async readSchedule(): Promise<{ loaded: LoadedSchedule; due: DueWake | undefined } | undefined> {
    try {
      const loaded = await loadSchedule(this.instance.paths);
      const usable = {
        ...loaded.schedule,
        wakes: loaded.schedule.wakes.filter((w) => !('at' in w && this.firedOneShots.has(`${w.at}\n${w.note}`))),
      };
      const due = nextWake(usable, this.scheduleCursor);
      // Indices refer to the file: map back from the filtered list.
      const index = due ? loaded.schedule.wakes.indexOf(usable.wakes[due.index]!) : -1;
      this.lastScheduleError = undefined;
      return { loaded, due: due ? { ...due, index } : undefined };
    } catch (error) {
      const message = describeError(error);
      if (message !== this.lastScheduleError) this.log.error({ err: error }, `schedule.json ignored: ${message}`);
      this.lastScheduleError = message;
      return undefined;
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
    this.state = 'stopping';
  }

  private async step(): Promise<void> {
    const signal = this.stopController.signal;
    if (!(await this.reloadInstance())) {
      await this.waker.wait(this.pollMs);
      return;
    }
    const pausedReason = await readPausedReason(this.instance.paths);
    this.paused = pausedReason !== undefined;
    if (pausedReason !== undefined) {
      this.mail.refreshCount();
      if (this.state !== 'paused') this.log.warn({ reason: pausedReason.split('\n')[0] }, `paused: no tick until kernel-runner resume ${this.instance.name}`);
      this.enterPaused(pausedReason);
      await this.waker.wait(this.pollMs);
      return;
    }
    const now = Date.now();
    const policy = supervisorPolicy(this.instance.config.runner);
    const before = this.counters;
    this.counters = settleCounters(before, policy, now);
    if (this.gaveUp && this.counters !== before) {
      this.gaveUp = false;
      this.restartPending = policy.restart !== 'no';
      this.reason = undefined;
      this.log.info(`no failure for reset_after (${Math.round(policy.backoff.resetAfter / 1000)}s): restart counters reset, restarting`);
    }
    const messages = await this.mail.next();
    const schedule = await this.readSchedule();
    const wakeDue = schedule?.due && schedule.due.time.getTime() <= now ? schedule.due : undefined;
    const trigger: Trigger | undefined = messages.length > 0 ? 'message' : wakeDue ? 'schedule' : this.restartPending ? 'restart' : undefined;

    this.nextWakeInfo = describeNextWake(schedule?.due, this.restartPending ? Math.max(now, this.notBefore) : undefined);
    const hold = trigger && now >= this.notBefore ? await this.gate.check(this.instance, now, this.mail.waiting) : undefined;
    if (trigger && now >= this.notBefore && !hold) {
      await this.runTick(trigger, messages, wakeDue, schedule?.loaded);
      return;
    }
    if (hold) {
      this.state = 'limited';
      this.reason = hold.reason;
    } else if (trigger) {
      this.state = 'backoff';
      this.reason = `backing off after ${this.counters.failures} failed tick(s) until ${new Date(this.notBefore).toISOString()}`;
    } else {
      this.state = this.gaveUp ? 'gave-up' : 'idle';
      if (!this.gaveUp) this.reason = this.lastScheduleError ? `schedule.json ignored: ${this.lastScheduleError}` : undefined;
    }
    const until = Math.min(trigger ? Math.max(this.notBefore, hold?.until ?? 0) : Infinity, schedule?.due ? schedule.due.time.getTime() : Infinity, now + this.pollMs);
    // Held by a limit, new messages change nothing: only time (or a stop) does, so a flood does not spin the loop.
    if (hold) await sleep(until - now, signal);
    else if (!signal.aborted) await this.waker.wait(until - now);
  }

  private enterPaused(reason: string): void {
    this.paused = true;
    this.state = 'paused';
    this.reason = reason;
  }

  private async runTick(trigger: Trigger, messages: readonly string[], wake: DueWake | undefined, schedule: LoadedSchedule | undefined): Promise<void> {
    const policy = supervisorPolicy(this.instance.config.runner);
    const texts = tickMessages({ crashNotice: this.crashNotice, wake, restart: trigger === 'restart', messages });

    const env = await tickEnvironment(this.instance, this.log, this.deps.env);
    const tickController = new AbortController();
    const onStop = () => tickController.abort();
    this.stopController.signal.addEventListener('abort', onStop, { once: true });
    const startedAt = Date.now();
    this.current = { started: new Date(startedAt).toISOString(), trigger };
    this.state = 'ticking';
    this.reason = undefined;
    if (trigger === 'restart') this.counters = recordRestart(this.counters, startedAt);
    this.restartPending = false;
    this.log.info({ trigger, messages: messages.length, wake: wake?.spec }, `starting a tick (${trigger})`);

    let result: WatchTickResult;
    let tickNumber: number | undefined;
    try {
      let running: WatchRunningTick;
      try {
        const onInContext = (had: readonly string[]) => this.mail.inContext(had, tickNumber);
        running = await this.deps.startTick(this.instance, { logger: this.log, messages: texts, signal: tickController.signal, env, trigger, onInContext });
      } catch (error) {
        // Not a failed tick: another runner holds the instance, or it was paused meanwhile. Try again later.
        if (isKernelError(error, 'TICK_RUNNING') || isKernelError(error, 'INSTANCE_PAUSED')) {
          this.log.warn({ err: error }, `no tick now: ${describeError(error)}`);
          this.current = undefined;
          this.state = 'idle';
          this.reason = describeError(error);
          this.restartPending = trigger === 'restart' || this.restartPending;
          if (trigger === 'restart') this.counters = { ...this.counters, restarts: Math.max(0, this.counters.restarts - 1) };
          this.notBefore = Date.now() + Math.max(this.pollMs, 5000);
          return;
        }
        throw error;
      }
      this.running = running;
      tickNumber = running.tick;
      await this.gate.started(this.instance, new Date(startedAt), running.tick);
      if (running.tick !== undefined) this.current = { ...this.current, number: running.tick };
      // The tick has them now; they are delivered once its model has had them (onInContext).
      this.crashNotice = undefined;
      for (const message of messages) this.mail.taken(message);
      if (wake) {
        if (wake.kind === 'at') this.firedOneShots.add(`${wake.spec}\n${wake.note}`);
        if (schedule) await removeFiredWake(this.instance.paths, schedule, wake).catch((error: unknown) => this.log.warn({ err: error }, 'could not remove the fired wake from schedule.json'));
      }
      if (wake || trigger === 'schedule') this.scheduleCursor = new Date();
      // Anything that arrived between reading the inbox and the start goes to the running agent.
      this.onInboxChange();
      result = await running.done;
    } catch (error) {
      result = { failed: true, status: isKernelError(error) ? error.code : 'error', error: describeError(error) };
    } finally {
      this.stopController.signal.removeEventListener('abort', onStop);
    }
    await this.midTick.idle();
    this.running = undefined;
    await this.mail.endTick(result.tick ?? tickNumber).catch((error: unknown) => this.log.error({ err: error }, `the messages of the tick cannot be settled: ${describeError(error)}`));
    if (wake) this.scheduleCursor = new Date(Math.max(this.scheduleCursor.getTime(), startedAt));

    const ended = Date.now();
    tickNumber = result.tick ?? this.current?.number;
    this.lastResult = {
      ...(tickNumber !== undefined ? { tick: tickNumber } : {}),
      status: result.status,
      ended: new Date(ended).toISOString(),
      durationMs: ended - startedAt,
      ...(result.error ? { error: result.error } : {}),
    };
    this.current = undefined;
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
    this.restartPending = decision.restart;
    this.gaveUp = decision.gaveUp;
    this.notBefore = ended + Math.max(decision.delayMs, result.retryAfterMs ?? 0);
    if (decision.gaveUp) this.reason = decision.reason;
    const level = result.failed ? 'warn' : 'info';
    // A tick that paused the instance is followed by nothing until a person resumes it: say that, not the restart the policy would make.
    const pausedNow = await readPausedReason(this.instance.paths);
    if (pausedNow !== undefined) this.enterPaused(pausedNow);
    const next = pausedNow === undefined ? decision.reason : `instance paused: no tick until kernel-runner resume ${this.instance.name} (agent-kernel doctor ${this.instance.name} shows the fix)`;
    this.log[level]({ result: this.lastResult, restarts: this.counters.restarts, failures: this.counters.failures }, `tick ended (${result.status}); ${next}`);
  }
}
