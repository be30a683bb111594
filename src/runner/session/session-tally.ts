import type { ErrorSignals } from '../harnesses/classify.js';
import type { HarnessEvent, Usage } from '../harnesses/harness.js';

export interface SessionTokens {
  input: number;
  output: number;
  cache_creation: number;
  cache_read: number;
}

/** What one harness session's stream added up to so far. */
export interface SessionTally {
  sawResult: boolean;
  /** The latest main-thread assistant text. */
  lastMessage: string;
  /** The latest assistant event was a streamed piece: the next piece continues lastMessage. */
  streaming?: boolean;
  tokens: SessionTokens;
  /** The highest cost the harness reported (it reports a running total). */
  costUsd: number;
  /** Tool results seen: one per tool call that completed. */
  toolCalls: number;
  /** Turns as the harness counts them (`num_turns` of each result), summed over results. */
  turns: number;
  /** Error facts since the latest result. */
  signals: ErrorSignals;
  /** Error facts as of the latest result (what a finished session is classified by). */
  resultSignals?: ErrorSignals;
}

export function emptyTally(): SessionTally {
  return { sawResult: false, lastMessage: '', tokens: { input: 0, output: 0, cache_creation: 0, cache_read: 0 }, costUsd: 0, toolCalls: 0, turns: 0, signals: {} };
}

function addUsage(tokens: SessionTokens, usage: Usage): SessionTokens {
  return {
    input: tokens.input + (usage.input_tokens ?? 0),
    output: tokens.output + (usage.output_tokens ?? 0),
    cache_creation: tokens.cache_creation + (usage.cache_creation_input_tokens ?? 0),
    cache_read: tokens.cache_read + (usage.cache_read_input_tokens ?? 0),
  };
}

/** The model answered or a tool ran: whatever was unreachable is reachable again. */
function withoutUnreachable(signals: ErrorSignals): ErrorSignals {
  if (signals.unreachable === undefined) return signals;
  const rest = { ...signals };
  delete rest.unreachable;
  return rest;
}

/** Epoch seconds or milliseconds → milliseconds. */
function toEpochMs(value: number): number {
  return value < 1e12 ? value * 1000 : value;
}

/** Pure: the tally after one more event. Events that carry nothing to count leave it as it was. */
export function tallyEvent(tally: SessionTally, event: HarnessEvent): SessionTally {
  switch (event.type) {
    case 'assistant': {
      let lastMessage = tally.lastMessage;
      if (event.mainThread && event.text) lastMessage = event.delta && tally.streaming ? lastMessage + event.text : event.text;
      const rest = withoutUnreachable(tally.signals);
      const signals = event.error ? { ...rest, assistantError: event.error, assistantText: event.text } : rest;
      return { ...tally, lastMessage, streaming: event.delta === true, signals };
    }
    case 'tool-call':
      return { ...tally, streaming: false, signals: withoutUnreachable(tally.signals) };
    case 'tool-result':
      return { ...tally, streaming: false, toolCalls: tally.toolCalls + 1, signals: withoutUnreachable(tally.signals) };
    case 'notice':
      return event.unreachable ? { ...tally, signals: { ...tally.signals, unreachable: event.text } } : tally;
    case 'usage':
      return {
        ...tally,
        tokens: addUsage(tally.tokens, event.usage),
        costUsd: tally.costUsd + (event.costUsd ?? 0),
      };
    case 'api-retry':
      return { ...tally, signals: { ...tally.signals, lastRetry: { status: event.status, ...(event.error === undefined ? {} : { error: event.error }) } } };
    case 'rate-limit': {
      const rateLimit = { status: event.status, ...(event.resetsAt === undefined ? {} : { resetsAt: toEpochMs(event.resetsAt) }) };
      return { ...tally, signals: { ...tally.signals, rateLimit } };
    }
    case 'result': {
      const tokens = addUsage(tally.tokens, event.usage ?? {});
      const resultSignals: ErrorSignals = {
        ...tally.signals,
        resultIsError: event.isError,
        resultSubtype: event.subtype,
        resultText: event.text,
        apiErrorStatus: event.apiErrorStatus ?? null,
        ...(event.retryable === undefined ? {} : { retryable: event.retryable }),
      };
      return {
        ...tally,
        sawResult: true,
        tokens,
        costUsd: event.costUsd === undefined ? tally.costUsd : Math.max(tally.costUsd, event.costUsd),
        turns: tally.turns + (event.numTurns ?? 0),
        resultSignals,
        // A rate-limit report outlives the turn it came in; the other facts belong to that turn.
        signals: tally.signals.rateLimit ? { rateLimit: tally.signals.rateLimit } : {},
      };
    }
    case 'init':
    case 'mcp-status':
    case 'compacting':
    case 'user-replay':
      return tally;
  }
}

/** Pure: the tally of a whole stream of events. */
export function tallyEvents(events: Iterable<HarnessEvent>, start: SessionTally = emptyTally()): SessionTally {
  let tally = start;
  for (const event of events) tally = tallyEvent(tally, event);
  return tally;
}
