import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Instance } from '../../config/instance.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { ContextSnapshot } from './context.js';
import { type Classification, type ErrorClass, stderrCause } from '../harnesses/classify.js';
import type { Harness, HarnessSetup } from '../harnesses/harness.js';
import type { SessionTally, SessionTokens } from './session-tally.js';

/** Why the runner ended a session itself. */
export type EndReason = Extract<ErrorClass, 'context' | 'timeout' | 'idle' | 'aborted' | 'mcp'>;

export interface SessionResult {
  sessionId: string;
  /** Set when the runner ended the session (watchdog, compaction, MCP failure, abort). */
  endedBy?: EndReason;
  endDetail?: string;
  /** From the stream; undefined when the session ended with a successful result. */
  classification?: Classification;
  sawResult: boolean;
  exitCode: number | null;
  lastMessage: string;
  tokens: SessionTokens;
  costUsd: number;
  toolCalls: number;
  turns: number;
  context: ContextSnapshot;
  stderrTail: string;
  transcriptCopy?: string;
}

export interface SessionEnd {
  sessionId: string;
  harness: Pick<Harness, 'name' | 'classify' | 'exitCodeIsResult'>;
  tally: SessionTally;
  endedBy?: EndReason | undefined;
  endDetail?: string | undefined;
  exitCode: number | null;
  context: ContextSnapshot;
  stderrTail: string;
  transcriptCopy?: string | undefined;
  /** What the operator does to give this harness credentials (harness.credentialsHelp). */
  credentialsHelp?: string | undefined;
}

/**
 * Pure: what a finished session amounts to. A session the runner ended is not classified,
 * except one that fell silent while its harness could not reach the model: that is a transient
 * error (retried with backoff), not an idle agent. One that ended without a result is a harness
 * error quoting what its stderr says went wrong. A credentials error says how to fix it.
 */
export function sessionResult(end: SessionEnd): SessionResult {
  const { tally, exitCode } = end;
  let endedBy = end.endedBy;
  let classification: Classification | undefined;
  if (endedBy === 'idle' && tally.signals.unreachable) {
    classification = { errorClass: 'transient', reason: `the model could not be reached: ${tally.signals.unreachable}` };
    endedBy = undefined;
  } else if (!endedBy) {
    classification = end.harness.classify({ ...(tally.resultSignals ?? tally.signals), stderr: end.stderrTail });
  }
  const cleanExitIsResult = end.harness.exitCodeIsResult === true && exitCode === 0;
  if (!endedBy && !tally.sawResult && !classification && !cleanExitIsResult) classification = { errorClass: 'harness', reason: 'the harness ended without a result' };
  if (classification?.errorClass === 'harness' && !tally.sawResult) {
    const cause = stderrCause(end.stderrTail);
    classification = { ...classification, reason: `the harness exited (code ${exitCode}) without a result${cause ? `: ${cause}` : ''}` };
  }
  if (classification?.credentials) classification = { ...classification, reason: credentialsReason(end.harness.name, classification.reason, end.credentialsHelp) };
  return {
    sessionId: end.sessionId,
    ...(endedBy ? { endedBy, endDetail: end.endDetail } : {}),
    ...(classification ? { classification } : {}),
    sawResult: tally.sawResult,
    exitCode,
    lastMessage: tally.lastMessage,
    tokens: { ...tally.tokens },
    costUsd: tally.costUsd,
    toolCalls: tally.toolCalls,
    turns: tally.turns,
    context: end.context,
    stderrTail: end.stderrTail,
    ...(end.transcriptCopy ? { transcriptCopy: end.transcriptCopy } : {}),
  };
}

/** Copy the harness's own session transcript next to the tick log (`tick-NNN.session[-attempt].jsonl`); undefined when it has none. */
export async function copySessionTranscript(options: {
  harness: Harness;
  setup: HarnessSetup;
  env: NodeJS.ProcessEnv;
  instance: Instance;
  tick: number;
  attempt: number;
  logger: Logger;
}): Promise<string | undefined> {
  const source = options.harness.sessionTranscriptPath?.(options.setup, options.env);
  if (!source) return undefined;
  const suffix = options.attempt > 1 ? `-${options.attempt}` : '';
  const target = options.instance.paths.tickLog(options.tick).replace(/\.jsonl$/, `.session${suffix}.jsonl`);
  try {
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(source, target);
    return target;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') options.logger.warn({ err: describeError(error), source }, 'cannot copy the session transcript');
    return undefined;
  }
}

const HARNESS_TITLES: Readonly<Record<string, string>> = { 'claude-code': 'Claude Code', opencode: 'opencode', 'gemini-cli': 'Gemini CLI', codex: 'Codex CLI' };
/** The harness's words for "I have no credentials" (rather than "the API refused them"). */
const NO_CREDENTIALS = /not logged in|please run \/login|api key is missing|missing (bearer|authentication|api key)|missing environment variable|must specify the \w+ environment variable|please set an auth method|loadapikeyerror/i;

/** The harness's words for "the API refused my credentials". */
const REFUSED = /invalid api key|invalid x-api-key|incorrect api key|api key not valid|\b401\b|unauthorized|authentication[_ ]failed|authentication_error|oauth token (has )?expired|revoked/i;

/**
 * Pure: a credentials error in our words, for every place a person or the agent reads it (status,
 * the ticks list, the tick's transcript, the next tick's prompt): the model never ran, why, the
 * fix, and what the harness itself said last (quoted without its interactive advice, such as
 * Claude Code's "Please run /login", which an unattended tick cannot follow).
 */
export function credentialsReason(harness: string, said: string, help: string | undefined): string {
  const title = HARNESS_TITLES[harness] ?? harness;
  // Refused first: Claude Code ends "Invalid API key" with the same "Please run /login" as "Not logged in".
  const why = REFUSED.test(said) ? `the model's API refused ${title}'s credentials` : NO_CREDENTIALS.test(said) ? `${title} has no credentials` : undefined;
  // A cause of another kind (opencode's model its provider has no key for): its own words, then the fix.
  if (!why) return help ? `${said}. ${help}` : said;
  const words = said.split('\n')[0]!.replace(/\s*[·|-]?\s*please run \/login\.?/i, '').trim().slice(0, 200);
  return `the model never ran: ${why}${words ? ` (it said: "${words}")` : ''}${help ? `; ${help}` : ''}`;
}

/** Pure: a session that never started, refused with a fatal reason (its harness lacks credentials). */
export function refusedSession(sessionId: string, reason: string, context: ContextSnapshot): SessionResult {
  return {
    sessionId,
    classification: { errorClass: 'fatal', reason, credentials: true },
    sawResult: false,
    exitCode: null,
    lastMessage: '',
    tokens: { input: 0, output: 0, cache_creation: 0, cache_read: 0 },
    costUsd: 0,
    toolCalls: 0,
    turns: 0,
    context,
    stderrTail: '',
  };
}
