import type http from 'node:http';
import type { Instance } from '../../config/instance.js';
import { CodedError, describeError, isCodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { type BuildFailure, CONTAINER_READY_MS, SANDBOX_HEARTBEAT_MS, TERMINALS_READY_MS, type SandboxLine, type SandboxReady } from '../protocol.js';
import { openSandboxInStages } from '../../sandbox/container/open-sandbox.js';
import type { TerminalsRuntime } from '../../server/terminals/runtime.js';

/** Longest progress line passed on (a RUN step's output is the agent's and may be one endless line). */
const MAX_PROGRESS_CHARS = 2000;

async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new CodedError('CONTAINER_FAILED', `${what} did not finish within ${Math.round(ms / 1000)} s; the kernel's log says where it stands`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The step and output of a failed build of the agent's Containerfile, or undefined for any other failure. */
export function buildFailureOf(error: unknown): BuildFailure | undefined {
  if (!isCodedError(error, 'IMAGE_BUILD_FAILED')) return undefined;
  const { step, output, error: said } = error.details as { step?: unknown; output?: unknown; error?: unknown };
  if (!Array.isArray(output)) return undefined;
  return { step: typeof step === 'string' ? step : '', output: output.map(String), error: typeof said === 'string' ? said : describeError(error) };
}

/**
 * Bring the container up to date for a tick: build a changed image (bounded by
 * container.build_timeout), recreate a stale container, adopt the terminals again (each bounded
 * too). When only the agent's Containerfile failed to build while the container of the image
 * before still runs, the tick goes on there and the answer says why (the agent fixes it).
 */
export async function prepareSandboxForTick(instance: Instance, runtime: TerminalsRuntime, logger: Logger, onProgress: (line: string) => void): Promise<SandboxReady> {
  const progress = (line: string) => {
    logger.info({ phase: 'tick sandbox' }, line);
    onProgress(line.length > MAX_PROGRESS_CHARS ? `${line.slice(0, MAX_PROGRESS_CHARS)}…` : line);
  };
  const before = runtime.current;
  let opened;
  try {
    opened = await openSandboxInStages(instance, { logger, onProgress: progress });
  } catch (error) {
    const buildFailed = buildFailureOf(error);
    if (buildFailed === undefined || before === undefined || before.broken !== undefined) throw error;
    logger.warn({ step: buildFailed.step, error: buildFailed.error }, 'the agent\'s Containerfile did not build; the tick goes on in the container of the image before');
    progress(`the build failed${buildFailed.step ? ` at ${buildFailed.step}` : ''}; the tick goes on in the container as it was`);
    return { sandbox: before.where, recreated: false, buildFailed };
  }
  await within(opened.finished, CONTAINER_READY_MS, 'The container\'s start-up (egress, proxy settings)');
  if (opened.recreated && before) {
    logger.warn('the container was recreated for a tick (its image changed); starting the terminals again');
    progress('the container was made anew from the new image; starting the terminals again');
    await runtime.invalidate(before);
  }
  await within(runtime.terminals(), TERMINALS_READY_MS, 'Starting the terminals (adopting those that run)');
  return { sandbox: opened.sandbox.description, recreated: opened.recreated };
}

/** Answer `POST /v1/sandbox` (protocol.ts): progress and heartbeats as JSON lines, then the result or the failure. */
export function answerSandboxRequest(res: http.ServerResponse, prepare: (onProgress: (line: string) => void) => Promise<SandboxReady>): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const send = (line: SandboxLine) => {
    if (!res.writableEnded) res.write(`${JSON.stringify(line)}\n`);
  };
  const started = Date.now();
  const beat = setInterval(() => send({ alive: Math.round((Date.now() - started) / 1000) }), SANDBOX_HEARTBEAT_MS);
  void prepare((line) => send({ progress: line }))
    .then(
      (ready) => send(ready),
      (error: unknown) => {
        const buildFailed = buildFailureOf(error);
        send({ error: describeError(error), ...(isCodedError(error) ? { code: error.code } : {}), ...(buildFailed ? { buildFailed } : {}) });
      },
    )
    .finally(() => {
      clearInterval(beat);
      res.end();
    });
}
