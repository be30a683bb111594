import { agentFilesFor } from '../../sandbox/container/agent-files-for.js';
import { relativeInside } from '../../util/untrusted-fs.js';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { readJsonFile } from '../../config/parse.js';
import { describeIgnored } from '../../config/operator-config.js';
import type { Instance } from '../../config/instance.js';
import { loadStartup } from '../../config/startup.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { appendEvent } from '../../observe/events/event-log.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { sleep } from '../../util/sleep.js';
import type { ErrorClass } from '../harnesses/classify.js';
import { HarnessSession, type SessionResult } from '../session/harness-session.js';
import type { Harness } from '../harnesses/harness.js';
import { getHarness } from '../harnesses/index.js';
import { serverEnv } from '../../config/server-env.js';
import { openTickSandbox } from './tick-sandbox.js';
import { HOOK_TIMEOUT_MS, type HookKind, preStopIssues, runHooks } from '../hooks/hooks.js';
import { assertBuilt } from '../../config/package-files.js';
import { acquireTickLock, type TickLock } from './lock.js';
import { resumeSuspended, snapshotBeforeTick } from '../../snapshot/actions.js';
import { openTerminalIssues, readOpenTerminals } from './open-terminals.js';
import { assertNotPaused, writePaused } from './paused.js';
import { fatalFix } from './fatal-fix.js';
import { type PromptPart, composeTickPrompt, loadTickPrompt, tickPromptAuthor, tickPromptParts } from '../session/prompt.js';
import { pushAgentBranch } from '../git/push.js';
import { checkHarnessAvailable } from '../harnesses/harness-check.js';
import { beginTickRecord, finishTickRecord, type TickRecord, type TickTokens, updateTickRecord } from '../../state/runner-state.js';
import { killOrphanedHarness } from './orphaned-harness.js';
import { processStartTime } from '../../util/process/process-group.js';
import { addSessionTokens, retryDelay, tickVerdict } from './tick-verdict.js';

/**
 * A tick (issue 5, seed 000 "Agent Runner"): bring the container up, run pre-tick hooks,
 * run the harness against our MCP server (retrying transient errors with a fresh session),
 * run post-tick hooks, push, and record the tick in state.json.
 */

export interface StartTickOptions {
  logger: Logger;
  /** Messages waiting for the agent (inbox, crash notices): added to the tick prompt. */
  messages?: readonly string[];
  /** Aborting ends the tick like a watchdog: stop signal, grace period, kill. */
  signal?: AbortSignal;
  /** The environment the harness starts from (default process.env); `runner.env` is laid over it. */
  env?: NodeJS.ProcessEnv;
  /** The longest a usage limit is waited out within the tick (default 6 h); past it the outcome carries retryAfterMs. */
  maxRateLimitWaitMs?: number;
  /** Container start-up progress lines (image builds). */
  onProgress?: (line: string) => void;
  /** What started the tick (message, schedule, restart, manual): in its event and transcript. */
  trigger?: string;
  /** Told messages (from `messages` or `deliver`) once the model has had them in its context (delivery-receipts.ts). */
  onInContext?: (messages: readonly string[]) => void;
  /** Told when an attempt failed and the next is scheduled (undefined: an attempt runs again). */
  onRetry?: (retry: TickRetry | undefined) => void;
}

/** The tick's retry policy at work (state.json's `current.retry`, the status API, the `tick.retry` event). */
export type TickRetry = NonNullable<TickRecord['retry']>;

export type TickStatus = 'ok' | 'interrupted' | 'failed';

export interface TickOutcome {
  tick: number;
  status: TickStatus;
  errorClass?: ErrorClass;
  error?: string;
  /** For a rate limit that was not waited out: when to try again. */
  retryAfterMs?: number;
  /** True when a fatal error paused the instance (system/paused was written). */
  paused: boolean;
  /** For a paused instance: the commands that fix the cause and resume, one step each. */
  fix?: string[];
  durationMs: number;
  attempts: number;
  sessionId?: string;
  tokens: TickTokens;
  costUsd: number;
  lastMessage: string;
  /** The tick's transcript, `<state>/logs/tick-NNN.jsonl`. */
  logFile: string;
}

export interface RunningTick {
  readonly tick: number;
  /**
   * Hand a message to the running agent (seed 000: mid-tick notifications). True when the
   * tick took it (delivered now, or folded into the prompt if the harness has not started);
   * false once the agent no longer takes input: keep the message for the next tick.
   */
  deliver(message: string): boolean;
  readonly done: Promise<TickOutcome>;
}

const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 6 * 3_600_000;

/**
 * Start a tick. Refuses (throws) when the instance is paused (INSTANCE_PAUSED), when a tick
 * already runs (TICK_RUNNING), or when the container cannot be had; after that, everything
 * ends up in the outcome.
 */
export async function startTick(instance: Instance, options: StartTickOptions): Promise<RunningTick> {
  const harness = getHarness(instance.config.runner.harness);
  assertBuilt();
  if (instance.ignoredConfig?.length) options.logger.warn({ ignored: instance.ignoredConfig }, describeIgnored(instance.ignoredConfig, instance));
  await assertNotPaused(instance.paths, instance.name);
  // A missing harness binary is an error before the tick starts, not a failed tick.
  checkHarnessAvailable(instance, { ...(options.env ?? process.env), ...instance.config.runner.env });
  const lock = await acquireTickLock(instance.paths.tickLock, instance.name);
  let sandbox: Sandbox;
  let record: TickRecord;
  let basePrompt: string;
  let promptAuthor: PromptPart['who'];
  try {
    // Checked again under the lock: a tick that just ended may have paused the instance.
    await assertNotPaused(instance.paths, instance.name);
    await killOrphanedHarness(instance, options.logger);
    // A suspended instance comes back first (its container from the suspend snapshot): a message or a wake resumes it.
    const resumed = await resumeSuspended(instance, { logger: options.logger, holdsTicks: true, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
    if (resumed) options.onProgress?.(`resumed ${instance.name} from snapshot ${resumed.id} (suspended since ${resumed.suspended.at})`);
    basePrompt = await loadTickPrompt(instance.dataDir, instance.config.runner);
    promptAuthor = tickPromptAuthor(instance.config.runner, await readJsonFile(instance.paths.operatorConfig).catch(() => undefined));
    const opened = await openTickSandbox(instance, { logger: options.logger, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
    sandbox = opened.sandbox;
    // In the record from the start: the agent's login reads it there and tells the agent.
    record = await beginTickRecord(instance.paths.state, { started: new Date().toISOString(), pid: process.pid, ...(opened.buildFailed ? { build_failed: opened.buildFailed } : {}) });
    await lock.update({ tick: record.tick });
    // Under the tick's lock, before the agent runs: a bad tick is undone with kernel-runner rollback --before-tick.
    await snapshotBeforeTick(instance, record.tick, options.logger);
    await appendEvent(instance.paths.events, { type: 'tick.started', tick: record.tick, trigger: options.trigger ?? 'manual' });
  } catch (error) {
    await lock.release();
    throw error;
  }
  const tick = new TickRun(instance, harness, sandbox, lock, record, basePrompt, promptAuthor, options);
  return { tick: record.tick, deliver: (message) => tick.deliver(message), done: tick.run() };
}

class TickRun {
  private readonly logger: Logger;
  private readonly messages: string[];
  private session: HarnessSession | undefined;
  /** Messages taken while no session takes input (container start, hooks, backoff). */
  private pending: string[] = [];
  private finished = false;
  private readonly startedAt = Date.now();
  private readonly prefix: string;

  constructor(
    private readonly instance: Instance,
    private readonly harness: Harness,
    private readonly sandbox: Sandbox,
    private readonly lock: TickLock,
    private readonly record: TickRecord,
    private readonly basePrompt: string,
    private readonly promptAuthor: PromptPart['who'],
    private readonly options: StartTickOptions,
  ) {
    this.logger = options.logger.child({ instance: instance.name, tick: record.tick });
    this.messages = [...(options.messages ?? [])];
    this.prefix = instance.config.hook_env_prefix;
  }

  deliver(message: string): boolean {
    if (this.finished || this.options.signal?.aborted) return false;
    if (!this.session) {
      // Between sessions (container start, pre-tick hooks, a retry's backoff): it joins the next prompt.
      this.pending.push(message);
      return true;
    }
    if (!this.session.deliver(message)) return false;
    // Kept so that a retry (a fresh session) gets it again.
    this.messages.push(message);
    return true;
  }

  async run(): Promise<TickOutcome> {
    const paths = this.instance.paths;
    const logFile = paths.tickLog(this.record.tick);
    await mkdir(paths.logs, { recursive: true }).catch(() => {});
    const tickLog = createWriteStream(logFile, { flags: 'a' });
    // A transcript that cannot be written is logged; it does not end the tick.
    tickLog.on('error', (error) => this.logger.error({ err: describeError(error), logFile }, 'cannot write the tick transcript'));
    tickLog.write(JSON.stringify({ type: 'kernel_runner', tick: this.record.tick, time: new Date().toISOString(), event: 'tick-start', trigger: this.options.trigger ?? 'manual', messages: this.messages.length }) + '\n');
    if (this.record.build_failed) tickLog.write(JSON.stringify({ type: 'kernel_runner', tick: this.record.tick, time: new Date().toISOString(), event: 'build-failed', ...this.record.build_failed }) + '\n');
    const workDir = path.join(paths.privateState, `tick-${String(this.record.tick).padStart(3, '0')}`);
    let outcome: TickOutcome | undefined;
    try {
      await this.runHookDir('pre-tick', paths.hooks.preTick, {});
      outcome = await this.runAttempts(tickLog, workDir, logFile);
    } catch (error) {
      this.logger.error({ err: describeError(error) }, 'the tick failed');
      outcome = this.outcome({ status: 'failed', errorClass: 'harness', error: describeError(error), attempts: 0, logFile });
    } finally {
      this.finished = true;
      // The runner's verdict in the transcript itself, in its words (the harness's last result may be its own advice).
      if (outcome) tickLog.write(JSON.stringify({ type: 'kernel_runner', tick: this.record.tick, time: new Date().toISOString(), event: 'tick-end', status: outcome.status, ...(outcome.errorClass ? { error_class: outcome.errorClass } : {}), ...(outcome.error ? { error: outcome.error } : {}), attempts: outcome.attempts }) + '\n');
      await new Promise<void>((resolve) => tickLog.end(resolve));
    }
    try {
      if (outcome.errorClass === 'fatal') {
        const reason = outcome.error ?? 'fatal harness error';
        outcome.fix = fatalFix(this.instance, reason);
        await writePaused(paths, reason, this.record.tick, outcome.fix);
        await appendEvent(paths.events, { type: 'instance.paused', tick: this.record.tick, reason });
        outcome.paused = true;
        this.logger.error({ reason }, `fatal error: instance paused, no tick runs until it is resumed (agent-kernel doctor ${this.instance.name} shows the fix)`);
      }
      outcome.durationMs = Date.now() - this.startedAt;
      await this.runHookDir('post-tick', paths.hooks.postTick, {
        [`${this.prefix}_TICK_DURATION`]: String(Math.round(outcome.durationMs / 1000)),
        [`${this.prefix}_TICK_LOG`]: logFile,
        [`${this.prefix}_LAST_MESSAGE`]: outcome.lastMessage,
        [`${this.prefix}_SESSION_ID`]: outcome.sessionId ?? '',
        [`${this.prefix}_TICK_STATUS`]: outcome.status === 'ok' ? 'normal' : 'abnormal',
      });
      // The bundle comes as the output of git in the container, on whichever engine: never from a folder.
      await pushAgentBranch({
        sandbox: this.sandbox,
        dataDir: this.instance.dataDir,
        workDir: paths.push,
        config: this.instance.config.runner.push,
        env: this.options.env ?? process.env,
        logger: this.logger,
      });
      outcome.durationMs = Date.now() - this.startedAt;
      await finishTickRecord(this.instance.paths.state, {
        tick: this.record.tick,
        started: this.record.started,
        ...(this.record.build_failed ? { build_failed: this.record.build_failed } : {}),
        duration_ms: outcome.durationMs,
        status: outcome.status,
        ...(outcome.errorClass ? { error_class: outcome.errorClass } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
        attempts: outcome.attempts,
        ...(outcome.sessionId ? { session_id: outcome.sessionId } : {}),
        tokens: outcome.tokens,
        cost_usd: outcome.costUsd,
      });
      await appendEvent(this.instance.paths.events, {
        type: 'tick.ended',
        tick: this.record.tick,
        status: outcome.status,
        durationMs: outcome.durationMs,
        ...(outcome.errorClass ? { errorClass: outcome.errorClass } : {}),
      });
      await rm(workDir, { recursive: true, force: true }).catch(() => {});
    } catch (error) {
      this.logger.error({ err: describeError(error) }, 'finishing the tick failed');
    } finally {
      await this.lock.release();
    }
    this.logger.info(
      { status: outcome.status, errorClass: outcome.errorClass, durationMs: outcome.durationMs, costUsd: outcome.costUsd, attempts: outcome.attempts },
      'tick ended',
    );
    return outcome;
  }

  private async runAttempts(tickLog: WriteStream, workDir: string, logFile: string): Promise<TickOutcome> {
    const runner = this.instance.config.runner;
    let totals: TickTokens = { input: 0, output: 0, cache_creation: 0, cache_read: 0, context_used: 0, context_window: 0 };
    let costUsd = 0;
    let last: SessionResult | undefined;
    let attempt = 0;
    const deadline = this.startedAt + runner.timeout;
    // One policy for the whole tick: its retries end by here, whatever the attempts left.
    const retryDeadline = Math.min(deadline, this.startedAt + runner.retry.total);
    for (;;) {
      attempt++;
      if (attempt > 1) this.options.onRetry?.(undefined);
      this.messages.push(...this.pending);
      this.pending = [];
      const session = new HarnessSession({
        instance: this.instance,
        harness: this.harness,
        tick: this.record.tick,
        attempt,
        prompt: composeTickPrompt(this.basePrompt, this.messages),
        promptParts: tickPromptParts(this.basePrompt, this.promptAuthor, this.messages),
        carried: [...this.messages],
        ...(this.options.onInContext ? { onInContext: this.options.onInContext } : {}),
        env: { ...(this.options.env ?? process.env), ...runner.env },
        // The runner's own config home, not one runner.env may point the harness at.
        serverEnv: serverEnv(this.options.env ?? process.env),
        workDir,
        tickLog,
        logger: this.logger.child({ attempt }),
        hooks: { preStopIssues: () => this.preStopIssues() },
        ...(this.options.signal ? { signal: this.options.signal } : {}),
        deadline,
        onSpawn: (pgid) => {
          const started = processStartTime(pgid);
          void updateTickRecord(this.instance.paths.state, { harness_pgid: pgid, ...(started ? { harness_start: started } : {}) }).catch(() => {});
        },
      });
      this.session = session;
      await updateTickRecord(this.instance.paths.state, { session_id: session.sessionId, attempts: attempt }).catch((error: unknown) =>
        this.logger.warn({ err: describeError(error) }, 'cannot update state.json'),
      );
      // The ended session refuses messages from here on; a retry below opens the next one.
      last = await session.run();
      totals = addSessionTokens(totals, last);
      costUsd += last.costUsd;

      const delay = retryDelay(last, {
        attempt,
        maxAttempts: runner.retry.max_attempts,
        initialMs: runner.retry.initial,
        maxMs: runner.retry.max,
        maxRateLimitWaitMs: this.options.maxRateLimitWaitMs ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS,
        now: Date.now(),
        deadline: retryDeadline,
      });
      const classification = last.classification;
      if (delay === undefined || !classification) break;
      this.session = undefined;
      await this.recordRetry(tickLog, { attempt, max_attempts: runner.retry.max_attempts, cause: classification.reason, next_at: new Date(Date.now() + delay).toISOString(), deadline: new Date(retryDeadline).toISOString() });
      await sleep(delay, this.options.signal);
      if (this.options.signal?.aborted) break;
    }

    return this.outcome({ attempts: attempt, logFile, tokens: totals, costUsd, lastMessage: last.lastMessage, sessionId: last.sessionId, ...tickVerdict(last) });
  }

  /** An attempt failed and the next is due: said once, in every place a person looks (state.json, events, transcript, log). */
  private async recordRetry(tickLog: WriteStream, retry: TickRetry): Promise<void> {
    const cause = retry.cause.split('\n')[0]!;
    this.logger.warn({ attempt: retry.attempt, of: retry.max_attempts, cause, nextAt: retry.next_at, deadline: retry.deadline }, `attempt ${retry.attempt} of ${retry.max_attempts} failed (${cause}): next try at ${retry.next_at}`);
    tickLog.write(JSON.stringify({ type: 'kernel_runner', tick: this.record.tick, time: new Date().toISOString(), event: 'retry-wait', ...retry }) + '\n');
    this.options.onRetry?.(retry);
    await updateTickRecord(this.instance.paths.state, { retry }).catch((error: unknown) => this.logger.warn({ err: describeError(error) }, 'cannot update state.json'));
    await appendEvent(this.instance.paths.events, { type: 'tick.retry', tick: this.record.tick, attempt: retry.attempt, cause, nextAt: retry.next_at, deadline: retry.deadline });
  }

  private outcome(fields: Partial<TickOutcome> & Pick<TickOutcome, 'status' | 'attempts' | 'logFile'>): TickOutcome {
    return {
      tick: this.record.tick,
      paused: false,
      durationMs: Date.now() - this.startedAt,
      tokens: { input: 0, output: 0, cache_creation: 0, cache_read: 0, context_used: 0, context_window: 0 },
      costUsd: 0,
      lastMessage: '',
      ...fields,
    };
  }

  private hookEnv(extra: Record<string, string>): Record<string, string> {
    return { DATA_DIR: this.instance.dataDir, [`${this.prefix}_TICK`]: String(this.record.tick), ...extra };
  }

  private async runHookDir(kind: HookKind, dir: string, extra: Record<string, string>): ReturnType<typeof runHooks> {
    return runHooks(kind, relativeInside(this.instance.dataDir, dir), {
      sandbox: this.sandbox,
      // On a remote engine the hooks are listed on the volume there, through the engine.
      files: agentFilesFor(this.instance, this.options.env ?? process.env),
      dataDir: this.instance.dataDir,
      env: this.hookEnv(extra),
      cwd: this.instance.dataDir,
      timeoutMs: HOOK_TIMEOUT_MS[kind],
      logger: this.logger,
    });
  }

  /** Pre-stop: the hooks' stdout lines, and terminals left open that are not startup terminals. */
  private async preStopIssues(): Promise<string[]> {
    const results = await this.runHookDir('pre-stop', this.instance.paths.hooks.preStop, {});
    let startupTtys = new Set<number>();
    try {
      startupTtys = new Set((await loadStartup(this.instance.dataDir)).terminals.map((t) => t.tty));
    } catch (error) {
      this.logger.warn({ err: describeError(error) }, 'startup.json cannot be read; counting every open terminal');
    }
    const open = await readOpenTerminals(this.instance.paths.terminalRegistry, (error) => this.logger.warn({ err: describeError(error) }, 'the terminal registry is unreadable; not counting open terminals'));
    return [...preStopIssues(results), ...openTerminalIssues(open, startupTtys)];
  }
}
