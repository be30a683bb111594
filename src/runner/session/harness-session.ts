import { randomUUID } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import type { Instance } from '../../config/instance.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { settlesWithin } from '../../util/race-timeout.js';
import { ContextTracker } from './context.js';
import { DeliveryReceipts } from './delivery-receipts.js';
import { type HookChannel, hookSocketPath, listenHookChannel } from '../hooks/hook-channel.js';
import { type Harness, type HarnessEvent, type HarnessSetup, isProgress } from '../harnesses/harness.js';
import { privateTmp } from '../harnesses/harness-env.js';
import { mcpServerSpec } from '../harnesses/mcp-server-spec.js';
import { packageFiles } from '../../config/package-files.js';
import { McpStatusRequests, mcpFailureMessage, serverStatus, waitForMcpServer } from './mcp-handshake.js';
import { type PromptPart, messageAuthor, midTickMessage } from './prompt.js';
import { type GroupProcess, reapGroup, spawnGroup, stopGroup } from '../../util/process/process-group.js';
import { type EndReason, type SessionResult, copySessionTranscript, refusedSession, sessionResult } from './session-result.js';
import { SessionHookHandler } from './session-hooks.js';
import { emptyTally, tallyEvent } from './session-tally.js';
import { hookSettings, writeHookSettings, writeInvocationFiles } from './tick-files.js';
import { McpTapCheck, credentialsContext } from './session-mcp.js';
import { stampLine } from './transcript-records.js';

export type { EndReason, SessionResult } from './session-result.js';
export type { SessionTokens } from './session-tally.js';
export { MCP_CONNECT_TIMEOUT_MS } from './mcp-handshake.js';
export { MAX_STOP_BLOCKS } from './session-hooks.js';

/**
 * One run of the harness within a tick (a tick retries with a fresh session after a
 * transient error). Owns the process group, the stream, the hooks channel and the watchdogs;
 * the tally (session-tally), the hooks (session-hooks), the MCP handshake (mcp-handshake) and
 * the result (session-result) live beside it.
 */

export interface SessionHooks {
  /** Pre-stop checks: the blocking issues (empty: the agent may stop). */
  preStopIssues(): Promise<string[]>;
}

export interface SessionOptions {
  instance: Instance;
  harness: Harness;
  tick: number;
  attempt: number;
  prompt: string;
  /** The prompt in parts, each with its author, for the transcript (prompt.ts tickPromptParts). */
  promptParts?: readonly PromptPart[];
  env: NodeJS.ProcessEnv;
  /** What our server needs to find the runner's own instance registry and state (config/server-env.ts). */
  serverEnv: Record<string, string>;
  /** Where this tick's generated files go (`<state>/private/tick-NNN`). */
  workDir: string;
  tickLog: WriteStream;
  logger: Logger;
  hooks: SessionHooks;
  signal?: AbortSignal;
  /** Wall-clock deadline (epoch ms) of the session. */
  deadline: number;
  /** Told the harness's process group id once it runs. */
  onSpawn?: (pgid: number) => void;
  /** The messages the prompt carries (delivery-receipts.ts says when the model has had them). */
  carried?: readonly string[];
  /** Told the messages (carried or delivered mid-session) once the model has had them in its context. */
  onInContext?: (messages: readonly string[]) => void;
}

/** After a result with messages still being processed, how long a silent harness gets before its input is closed. */
const AFTER_RESULT_QUIET_MS = 60_000;
const STDERR_TAIL_BYTES = 16_384;

export class HarnessSession {
  readonly sessionId = randomUUID();
  private proc: GroupProcess | undefined;
  private channel: HookChannel | undefined;
  private readonly context: ContextTracker;
  private readonly hookHandler: SessionHookHandler;
  private readonly mcpRequests = new McpStatusRequests();
  private tally = emptyTally();
  private stdinOpen = false;
  private promptSent = false;
  private writtenSinceResult = 0;
  /** Why the session is ending (the first reason wins), and what more to say about it. */
  private ending: { by: EndReason; detail?: string } | undefined;
  private stopping: Promise<void> | undefined;
  private lastEventAt = Date.now();
  private stderrTail = '';
  private quietTimer: NodeJS.Timeout | undefined;
  private readonly queued: string[] = [];
  private readonly receipts: DeliveryReceipts;
  private tap: McpTapCheck | undefined;

  constructor(private readonly options: SessionOptions) {
    const runner = options.instance.config.runner;
    this.receipts = new DeliveryReceipts(options.carried ?? [], options.onInContext);
    this.context = new ContextTracker({
      configured: runner.context_window,
      model: runner.model ?? options.instance.config.model,
      wrapUpRatio: runner.wrap_up_ratio,
    });
    this.hookHandler = new SessionHookHandler({
      context: this.context,
      logger: options.logger,
      preStopIssues: () => options.hooks.preStopIssues(),
      ended: () => this.ending !== undefined,
      endForCompaction: () => this.end('context', 'the context was about to be compacted'),
      touch: () => {
        this.lastEventAt = Date.now();
      },
      marker: (fields) => this.marker(fields),
    });
  }

  /**
   * Hand the running agent a message; false when it no longer takes input. Before the prompt
   * is sent (the MCP server still connecting) messages wait and follow the prompt.
   */
  deliver(message: string): boolean {
    if (this.ending || !this.options.harness.encodeUserMessage) return false;
    if (this.proc && (!this.stdinOpen || this.proc.hasExited())) return false;
    if (!this.promptSent) {
      this.queued.push(message);
      return true;
    }
    const uuid = randomUUID();
    this.writeLine(this.options.harness.encodeUserMessage(midTickMessage(message), uuid));
    this.receipts.wrote(uuid, message);
    this.writtenSinceResult++;
    this.marker({ event: 'message-delivered', chars: message.length, text: message, ...messageAuthor(message) });
    return true;
  }

  async run(): Promise<SessionResult> {
    const { instance, harness, logger } = this.options;
    const files = packageFiles();
    const socketPath = hookSocketPath(path.join(this.options.workDir, '..'));
    const workDir = path.join(this.options.workDir, `attempt-${this.options.attempt}`);
    const settingsFile = await writeHookSettings(workDir, hookSettings({ nodePath: process.execPath, hookCli: files.hookCli, socketPath }));
    let mcpServer = mcpServerSpec({ nodePath: process.execPath, serverBin: files.serverBin, dataDir: instance.dataDir, env: this.options.serverEnv });
    if (harness.mcpStatus === 'tap') {
      this.tap = new McpTapCheck(workDir, files.mcpTapCli);
      mcpServer = this.tap.wrap(mcpServer);
    }
    const setup: HarnessSetup = {
      instanceName: instance.name,
      dataDir: instance.dataDir,
      cwd: instance.paths.harnessCwd,
      home: instance.paths.harnessHome,
      workDir,
      tick: this.options.tick,
      sessionId: this.sessionId,
      prompt: this.options.prompt,
      mcpServer,
      settingsFile,
      config: instance.config.runner,
      model: instance.config.runner.model ?? instance.config.model,
      env: this.options.env,
    };
    const credentialsHelp = harness.credentialsHelp(credentialsContext(instance, this.options.env));
    const missing = harness.missingCredentials?.(setup);
    if (missing) {
      this.marker({ event: 'attempt-refused', attempt: this.options.attempt, reason: missing });
      return refusedSession(this.sessionId, `${missing}. ${credentialsHelp}`, this.context.snapshot());
    }
    const invocation = harness.invocation(setup);
    for (const dir of [setup.home, privateTmp(setup.home), setup.cwd]) await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeInvocationFiles(invocation.files);
    this.marker({ event: 'attempt-start', attempt: this.options.attempt, session_id: this.sessionId, command: invocation.command });
    logger.info({ sessionId: this.sessionId, command: invocation.command }, 'starting harness');
    this.channel = await listenHookChannel(socketPath, (kind, input) => this.hookHandler.handle(kind, input), (error) =>
      logger.warn({ err: describeError(error) }, 'hook channel error'),
    );

    let proc: GroupProcess;
    try {
      proc = await spawnGroup(invocation.command, invocation.args, { cwd: invocation.cwd, env: invocation.env });
    } catch (error) {
      await this.channel.close();
      throw error;
    }
    this.proc = proc;
    this.options.onSpawn?.(proc.pid);
    this.stdinOpen = invocation.interactiveStdin;
    if (!invocation.interactiveStdin) {
      proc.child.stdin?.end();
      this.promptSent = true;
      this.marker({ event: 'prompt', text: this.options.prompt, ...(this.options.promptParts ? { parts: this.options.promptParts } : {}) });
    }

    proc.child.stderr?.setEncoding('utf8');
    proc.child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
    });
    const lines = readline.createInterface({ input: proc.child.stdout!, crlfDelay: Infinity });
    const streamEnded = new Promise<void>((resolve) => lines.once('close', resolve));
    lines.on('line', (line) => this.onLine(line));

    const watchdog = setInterval(() => this.checkWatchdogs(), 1000);
    const onAbort = (): void => this.end('aborted', 'the tick was cancelled');
    this.options.signal?.addEventListener('abort', onAbort, { once: true });
    if (this.options.signal?.aborted) onAbort();

    try {
      if (invocation.interactiveStdin && !this.ending) await this.connectAndPrompt(proc);
      const exit = await proc.exited;
      if (!harness.encodeUserMessage && exit.code === 0 && !this.ending) this.receipts.endedOk();
      await this.stopping;
      const noTools = this.tap?.afterExit(instance, logger, (fields) => this.marker(fields));
      // A harness that exited by itself with nothing to report, never having listed our tools, ran a tick without them.
      if (noTools && exit.code === 0 && !this.ending) this.ending = { by: 'mcp', detail: noTools };
      await reapGroup(proc);
      // A process that left the group could keep the pipe open: do not wait for it forever.
      await settlesWithin(streamEnded, 5000);
      const { toolCalls, turns } = this.tally;
      this.marker({ event: 'attempt-end', attempt: this.options.attempt, exit_code: exit.code, signal: exit.signal, ended_by: this.ending?.by, tool_calls: toolCalls, turns });
      const transcriptCopy = await copySessionTranscript({ harness, setup, env: invocation.env, instance, tick: this.options.tick, attempt: this.options.attempt, logger });
      return sessionResult({
        sessionId: this.sessionId,
        harness,
        tally: this.tally,
        endedBy: this.ending?.by,
        endDetail: this.ending?.detail,
        exitCode: exit.code,
        context: this.context.snapshot(),
        stderrTail: this.stderrTail,
        transcriptCopy,
        credentialsHelp,
      });
    } finally {
      clearInterval(watchdog);
      if (this.quietTimer) clearTimeout(this.quietTimer);
      this.options.signal?.removeEventListener('abort', onAbort);
      if (!proc.hasExited()) await stopGroup(proc, { signal: 'SIGKILL', graceMs: 0 });
      await this.channel.close();
    }
  }

  /** Wait until our server is connected (or clearly is not), then send the prompt and what queued behind it. */
  private async connectAndPrompt(proc: GroupProcess): Promise<void> {
    const { harness } = this.options;
    const gone = (): boolean => this.ending !== undefined || proc.hasExited();
    const wait = await waitForMcpServer({
      harness,
      requests: this.mcpRequests,
      writeLine: (line) => this.writeLine(line),
      exited: proc.exited,
      gone,
      logger: this.options.logger,
      signal: this.options.signal,
    });
    if (wait.kind === 'failed') this.end('mcp', mcpFailureMessage(this.options.instance, wait.status));
    if (gone()) return;
    this.writeLine(harness.encodeUserMessage!(this.options.prompt));
    this.marker({ event: 'prompt', text: this.options.prompt, ...(this.options.promptParts ? { parts: this.options.promptParts } : {}) });
    this.promptSent = true;
    for (const message of this.queued.splice(0)) this.deliver(message);
  }

  private writeLine(line: string): void {
    const stdin = this.proc?.child.stdin;
    if (!stdin || !this.stdinOpen || stdin.destroyed) return;
    stdin.write(line + '\n');
  }

  private closeStdin(): void {
    if (!this.stdinOpen) return;
    this.stdinOpen = false;
    this.proc?.child.stdin?.end();
  }

  private marker(fields: Record<string, unknown>): void {
    this.options.tickLog.write(JSON.stringify({ type: 'kernel_runner', tick: this.options.tick, time: new Date().toISOString(), ...fields }) + '\n');
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    this.options.tickLog.write(stampLine(line) + '\n');
    const events = this.options.harness.parseLine(line);
    // Only progress holds off the idle timeout: a harness that prints retries or waits for a network is idle.
    if (events.some(isProgress)) this.lastEventAt = Date.now();
    for (const event of events) this.onEvent(event);
  }

  private onEvent(event: HarnessEvent): void {
    this.tally = tallyEvent(this.tally, event);
    switch (event.type) {
      case 'mcp-status':
        this.mcpRequests.answer(event.requestId, event.servers);
        return;
      case 'init': {
        this.context.observeModel(event.model);
        if (!event.mcpServers) return;
        const status = serverStatus(event.mcpServers);
        if (status !== 'connected' && status !== 'pending') this.end('mcp', mcpFailureMessage(this.options.instance, status));
        return;
      }
      case 'assistant':
        this.context.observeAssistant(event.usage, event.mainThread);
        this.receipts.assistant(event);
        return;
      case 'user-replay':
        this.receipts.replayed(event.uuid);
        return;
      case 'api-retry':
        this.options.logger.warn({ status: event.status, apiAttempt: event.attempt, error: event.error }, `the harness is retrying an API call (${event.status ?? 'no answer'}: ${event.error ?? 'no reason given'})`);
        return;
      case 'compacting':
        this.end('context', 'the context was about to be compacted');
        return;
      case 'result':
        this.context.observeWindow(event.contextWindow);
        this.afterResult(event.isError);
        return;
      case 'notice':
        this.options.logger.warn({ notice: event.text }, 'the harness says');
        return;
      case 'rate-limit':
      case 'tool-result':
      case 'tool-call':
      case 'usage':
        return;
    }
  }

  /** A turn ended: close the input unless messages arrived during it (the harness answers them in further turns). */
  private afterResult(isError: boolean): void {
    if (isError || this.writtenSinceResult === 0) {
      this.closeStdin();
      return;
    }
    this.writtenSinceResult = 0;
    if (this.quietTimer) clearTimeout(this.quietTimer);
    const resultAt = this.lastEventAt;
    this.quietTimer = setTimeout(() => {
      if (this.lastEventAt === resultAt) this.closeStdin();
    }, AFTER_RESULT_QUIET_MS);
  }

  private checkWatchdogs(): void {
    if (this.ending || !this.proc || this.proc.hasExited()) return;
    const runner = this.options.instance.config.runner;
    const now = Date.now();
    if (this.tap) {
      const seen = this.tap.check(now, this.options.instance, this.options.logger, (fields) => this.marker(fields));
      if (seen.failed) return this.end('mcp', seen.failed);
      if (seen.activityAt !== undefined) this.lastEventAt = Math.max(this.lastEventAt, seen.activityAt);
    }
    if (now >= this.options.deadline) this.end('timeout', `the tick ran past its time limit (runner.timeout ${Math.round(runner.timeout / 1000)} s)`);
    else if (now - this.lastEventAt >= runner.idle_timeout)
      this.end('idle', `the harness was silent for ${Math.round(runner.idle_timeout / 1000)} s (runner.idle_timeout)`);
  }

  /** End the session from the runner's side: the harness's stop signal, the grace period, then the whole group is killed. */
  end(reason: EndReason, detail: string): void {
    if (this.ending) return;
    this.ending = { by: reason, detail };
    this.options.logger.warn({ reason, detail }, 'ending the harness session');
    this.marker({ event: 'ending', reason, detail });
    this.mcpRequests.cancelAll();
    this.closeStdin();
    if (this.proc) this.stopping = stopGroup(this.proc, { signal: this.options.harness.stopSignal, graceMs: this.options.instance.config.runner.grace_period });
  }
}
