/**
 * A tick's transcript (`tick-NNN.jsonl`: Claude Code's stream-json, each line stamped with the
 * time it arrived, plus kernel-runner's own records) turned into items a person reads like a
 * CI log: who spoke (agent, harness, hook, runner, operator), when, tool calls with a one-line
 * summary, and a header with tokens and cost. Incremental (a live tick's lines arrive one by one)
 * and pure. Everything here is agent-controlled text: the page renders it as text.
 */

/** Who wrote an item: `peer` is another agent (its name in the title); `operator` only for what the operator sent. */
export type Speaker = 'agent' | 'harness' | 'hook' | 'runner' | 'operator' | 'peer';

export interface TranscriptItem {
  index: number;
  at?: string;
  who: Speaker;
  kind: 'prompt' | 'message' | 'text' | 'thinking' | 'tool' | 'note' | 'error' | 'result';
  /** One line: what the item is about (a tool call's summary, a runner event's name). */
  title?: string;
  text: string;
  tool?: { name: string; input: string; result?: string; resultLine?: string; isError?: boolean };
  /** A result or notice that says something went wrong (shown in red, never on green). */
  isError?: boolean;
}

export interface TranscriptSummary {
  started?: string;
  ended?: string;
  trigger?: string;
  model?: string;
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number; cacheRead: number; cacheCreation: number };
  costUsd: number;
  result?: { text: string; isError: boolean };
}

const MAX_FIELD = 20_000;

function cut(text: string, max = MAX_FIELD): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function firstLine(text: string, max = 140): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return cut(line.trim(), max);
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (obj(part).type === 'text' ? str(obj(part).text) : `[${str(obj(part).type) || 'part'}]`)).join('\n');
  return JSON.stringify(content ?? '');
}

/** `mcp__agent-kernel__type` → `type`. */
export function shortToolName(name: string): string {
  const match = /^mcp__.+?__(.+)$/.exec(name);
  return match ? match[1]! : name;
}

/** Pure: one line saying what a tool call asked for (`tty 0: ls /`, `wait 30 s`). */
export function toolSummary(name: string, input: Record<string, unknown>): string {
  const short = shortToolName(name);
  const quote = (v: unknown) => JSON.stringify(firstLine(String(v), 100));
  if (short === 'type' && input.tty !== undefined) return `tty ${String(input.tty)}${input.expect ? ` (${str(input.expect)})` : ''}: ${quote(input.text ?? '')}`;
  if (short === 'open') return input.command === undefined ? 'a shell' : quote(input.command);
  if (short === 'close' && input.tty !== undefined) return `tty ${String(input.tty)}`;
  if (short === 'wait') return input.timeout === undefined ? '' : `up to ${String(input.timeout)} s`;
  const parts = Object.entries(input).map(([k, v]) => `${k}=${typeof v === 'string' ? quote(v) : firstLine(JSON.stringify(v), 60)}`);
  return cut(parts.join(' '), 140);
}

/** Pure: `1 tool call`, `2 tool calls`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Pure: what a tick's prompt carried, counted from the prompt (session/prompt.ts): messages, and the runner's notices. */
export function promptTitle(text: string): string {
  const blocks = text.split(/^--- message \d+ of \d+ ---$/m).slice(1);
  const notices = blocks.filter((b) => /^\s*Notice:/.test(b)).length;
  const messages = blocks.length - notices;
  const carried = [messages ? plural(messages, 'message') : '', notices ? plural(notices, 'notice') : ''].filter(Boolean);
  return carried.length ? `prompt, with ${carried.join(' and ')}` : 'prompt';
}

/** Claude Code's error subtypes of a result, in words. */
const RESULT_WORDS: Record<string, string> = {
  error_during_execution: 'The session stopped before the agent finished: it was interrupted, or Claude Code failed during it (error_during_execution).',
  error_max_turns: 'The session stopped at its turn limit (error_max_turns).',
  error_max_budget_usd: 'The session stopped at its budget limit (error_max_budget_usd).',
};

/** Pure: a result event's outcome for a person: its text, else its subtype in words. */
export function resultWords(event: Record<string, unknown>): string {
  const text = str(event.result);
  if (text) return text;
  const subtype = str(event.subtype);
  return RESULT_WORDS[subtype] ?? (subtype === 'success' ? 'Finished (no final words).' : subtype);
}

/** Text Claude Code itself puts on the user's side of the conversation. */
const HARNESS_TEXT = /^\[Request interrupted by user[^\]]*\]$|^\[Request interrupted/;

/** What the runner's own records say, for a person. */
function runnerNote(event: string, fields: Record<string, unknown>): { who: Speaker; title: string; text: string } {
  switch (event) {
    case 'tick-start':
      // What the prompt carried is counted from the prompt itself (promptTitle): this count mixes messages and notices.
      return { who: 'runner', title: 'tick started', text: `trigger: ${str(fields.trigger) || 'manual'}` };
    case 'attempt-start':
      return { who: 'runner', title: `attempt ${num(fields.attempt)} started`, text: Array.isArray(fields.command) ? fields.command.map(String).join(' ') : '' };
    case 'attempt-end':
      return {
        who: 'runner',
        title: `attempt ${num(fields.attempt)} ended`,
        // The tool calls are counted once, in the header, from the calls listed here.
        text: `exit ${fields.exit_code === null || fields.exit_code === undefined ? '-' : String(fields.exit_code)}${fields.signal ? ` (${str(fields.signal)})` : ''}${fields.ended_by ? `, ended by the runner: ${str(fields.ended_by)}` : ''}`,
      };
    case 'pre-stop-block':
      return { who: 'hook', title: 'Stop hook: not yet', text: Array.isArray(fields.issues) ? fields.issues.map(String).join('\n') : '' };
    case 'pre-stop-gave-up':
      return { who: 'hook', title: 'Stop hook: gave up reminding', text: Array.isArray(fields.issues) ? fields.issues.map(String).join('\n') : '' };
    case 'wrap-up':
      return { who: 'hook', title: 'told the agent to wrap up', text: `context ${Math.round(num(fields.context_used) / 1000)}k of ${Math.round(num(fields.context_window) / 1000)}k` };
    case 'ending':
      return { who: 'runner', title: `ending the session (${str(fields.reason)})`, text: str(fields.detail) };
    case 'retry-wait':
      return { who: 'runner', title: `retrying in ${Math.round(num(fields.delay_ms) / 1000)} s`, text: str(fields.reason) };
    default: {
      const { type: _t, tick: _k, time: _time, event: _e, ...rest } = fields;
      return { who: 'runner', title: event || 'runner', text: Object.keys(rest).length ? JSON.stringify(rest) : '' };
    }
  }
}

export class TranscriptParser {
  readonly items: TranscriptItem[] = [];
  readonly summary: TranscriptSummary = { turns: 0, toolCalls: 0, tokens: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 }, costUsd: 0 };
  private readonly tools = new Map<string, TranscriptItem>();
  private changed = new Set<TranscriptItem>();
  private sessionCost = 0;
  private doneCost = 0;
  /** The runner's prompt, shown once the harness has it. */
  private pendingPrompt: { at?: string; event: Record<string, unknown> } | undefined;
  /** What the runner gave the model (prompt, messages): the harness echoes them back, and the echo is not shown again. */
  private readonly sentTexts = new Set<string>();

  /** Is this user-side text what the runner sent (a mid-tick message comes back wrapped: it ends with the message)? Each echo is taken once. */
  private takeEcho(text: string): boolean {
    for (const sent of this.sentTexts) {
      if (sent.trim() !== '' && (text === sent || text.trimEnd().endsWith(sent.trim()))) {
        this.sentTexts.delete(sent);
        return true;
      }
    }
    return false;
  }

  /** The prompt the runner sent, as one item (once). */
  flushPrompt(): void {
    const prompt = this.pendingPrompt;
    if (!prompt) return;
    this.pendingPrompt = undefined;
    this.prompt(prompt.event, prompt.at ? { at: prompt.at } : {});
  }

  /** Take one line; returns the items it added or changed (a tool call gains its result). */
  push(line: string): TranscriptItem[] {
    if (!line.trim()) return [];
    let event: Record<string, unknown>;
    try {
      event = obj(JSON.parse(line));
    } catch {
      return [];
    }
    this.changed = new Set();
    const at = str(event.received_at) || str(event.time) || undefined;
    if (at) {
      this.summary.started ??= at;
      this.summary.ended = at;
    }
    this.take(event, at);
    this.summary.costUsd = this.doneCost + this.sessionCost;
    return [...this.changed];
  }

  private add(item: Omit<TranscriptItem, 'index'>): TranscriptItem {
    const full = { index: this.items.length, ...item };
    this.items.push(full);
    this.changed.add(full);
    return full;
  }

  private take(event: Record<string, unknown>, at: string | undefined): void {
    const when = at ? { at } : {};
    const type = str(event.type);
    // Anything but the harness starting (or the runner's own notes) comes after the model had the prompt.
    if (type !== 'system' && type !== 'kernel_runner' && type !== 'control_response' && type !== 'user') this.flushPrompt();
    if (type === 'system' && event.subtype === 'init') {
      this.summary.model = str(event.model) || undefined;
      const servers = Array.isArray(event.mcp_servers) ? event.mcp_servers.map((s) => `${str(obj(s).name)} ${str(obj(s).status)}`).join(', ') : '';
      this.add({ ...when, who: 'harness', kind: 'note', title: 'session started', text: `model ${str(event.model) || '?'}${servers ? `; MCP servers: ${servers}` : ''}` });
      this.flushPrompt();
    } else if (type === 'system' && event.subtype === 'api_retry') {
      this.add({ ...when, who: 'harness', kind: 'error', title: `API error ${String(event.error_status ?? '')}`, text: `retrying (attempt ${String(event.attempt ?? '?')})` });
    } else if (type === 'system') {
      const { received_at: _r, type: _t, ...rest } = event;
      this.add({ ...when, who: 'harness', kind: 'note', title: str(event.subtype) || 'system', text: cut(JSON.stringify(rest), 2000) });
    } else if (type === 'assistant') {
      this.assistant(event, when);
    } else if (type === 'user') {
      this.user(event, when);
    } else if (type === 'result') {
      const isError = event.is_error === true || (str(event.subtype) !== '' && str(event.subtype) !== 'success');
      const text = cut(resultWords(event));
      this.sessionCost = num(event.total_cost_usd);
      this.summary.turns += num(event.num_turns);
      this.summary.result = { text: firstLine(text, 300), isError };
      this.add({ ...when, who: 'harness', kind: 'result', title: isError ? 'ended with an error' : 'result', text, ...(isError ? { isError } : {}) });
    } else if (type === 'kernel_runner') {
      const name = str(event.event);
      if (name === 'prompt') {
        // Shown where the harness took it (after its session started), once: its echo is skipped.
        this.flushPrompt();
        this.pendingPrompt = { ...when, event };
        this.sentTexts.add(str(event.text));
      } else if (name === 'message-delivered') {
        this.flushPrompt();
        this.sentTexts.add(str(event.text));
        const { who, title } = author(event, 'message handed to the agent');
        this.add({ ...when, who, kind: 'message', title, text: cut(str(event.text) || `(${num(event.chars)} characters)`) });
      } else {
        this.flushPrompt();
        if (name === 'tick-start') this.summary.trigger = str(event.trigger) || undefined;
        if (name === 'attempt-end') {
          this.doneCost += this.sessionCost;
          this.sessionCost = 0;
        }
        const note = runnerNote(name, event);
        this.add({ ...when, who: note.who, kind: 'note', title: note.title, text: cut(note.text) });
      }
    } else if (type === 'rate_limit_event') {
      const info = obj(event.rate_limit_info);
      if (str(info.status) !== 'allowed') this.add({ ...when, who: 'harness', kind: 'error', title: 'rate limited', text: info.resetsAt ? `until ${new Date(num(info.resetsAt) * 1000).toISOString()}` : '' });
    }
  }

  /** The tick's prompt, each part under its real author (runner/session/prompt.ts tickPromptParts); a log without parts: the kernel's. */
  private prompt(event: Record<string, unknown>, when: { at?: string }): void {
    if (!Array.isArray(event.parts)) {
      this.add({ ...when, who: 'runner', kind: 'prompt', title: promptTitle(str(event.text)), text: cut(str(event.text)) });
      return;
    }
    event.parts.map(obj).forEach((part, index) => {
      const { who, title } = author(part, index === 0 ? promptTitle(str(event.text)) : 'message');
      this.add({ ...when, who, kind: index === 0 ? 'prompt' : 'message', title, text: cut(str(part.text)) });
    });
  }

  private assistant(event: Record<string, unknown>, when: { at?: string }): void {
    const message = obj(event.message);
    // The CLI's own messages ("Not logged in", API errors) carry the model <synthetic>: not the agent's words.
    const who: Speaker = str(message.model) === '<synthetic>' ? 'harness' : 'agent';
    const usage = obj(message.usage);
    if (who === 'agent' && event.parent_tool_use_id == null) {
      this.summary.tokens.input += num(usage.input_tokens);
      this.summary.tokens.output += num(usage.output_tokens);
      this.summary.tokens.cacheRead += num(usage.cache_read_input_tokens);
      this.summary.tokens.cacheCreation += num(usage.cache_creation_input_tokens);
    }
    const content = message.content;
    if (typeof content === 'string') {
      this.add({ ...when, who, kind: 'text', text: cut(content) });
      return;
    }
    for (const part of Array.isArray(content) ? content.map(obj) : []) {
      if (part.type === 'text') this.add({ ...when, who, kind: 'text', text: cut(str(part.text)) });
      else if (part.type === 'thinking') this.add({ ...when, who, kind: 'thinking', text: cut(str(part.thinking)) });
      else if (part.type === 'tool_use') {
        const name = str(part.name);
        this.summary.toolCalls++;
        const item = this.add({ ...when, who, kind: 'tool', title: `${shortToolName(name)} ${toolSummary(name, obj(part.input))}`.trim(), text: '', tool: { name: shortToolName(name), input: cut(JSON.stringify(part.input ?? {}, null, 2)) } });
        this.tools.set(str(part.id), item);
      }
    }
  }

  private user(event: Record<string, unknown>, when: { at?: string }): void {
    const content = obj(event.message).content;
    const parts = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content.map(obj) : [];
    for (const part of parts) {
      if (part.type === 'tool_result') {
        const result = cut(resultText(part.content));
        const call = this.tools.get(str(part.tool_use_id));
        const tool = call?.tool;
        if (call && tool) {
          tool.result = result;
          tool.resultLine = firstLine(result);
          if (part.is_error === true) tool.isError = true;
          this.changed.add(call);
        } else {
          this.add({ ...when, who: 'harness', kind: 'tool', title: '(a result without its call)', text: '', tool: { name: '?', input: '', result, resultLine: firstLine(result), isError: part.is_error === true } });
        }
      } else if (part.type === 'text') {
        const text = str(part.text);
        // The prompt or a message echoed back: already shown where the runner sent it.
        if (this.takeEcho(text)) {
          this.flushPrompt();
          continue;
        }
        this.flushPrompt();
        // Anything else on the user's side is Claude Code's own (an interrupt, hook feedback), never the operator's.
        const who: Speaker = /hook/i.test(text) && !HARNESS_TEXT.test(text) ? 'hook' : 'harness';
        this.add({ ...when, who, kind: 'note', title: HARNESS_TEXT.test(text) ? 'interrupted' : who === 'hook' ? 'hook feedback' : 'harness', text: cut(text) });
      }
    }
  }
}

/** Who wrote a prompt part or a delivered message, as the runner stamped it; unstamped text is the kernel's, never the operator's. */
function author(fields: Record<string, unknown>, title: string): { who: Speaker; title: string } {
  const who = str(fields.who);
  if (who === 'peer') return { who: 'peer', title: `${title} from agent ${str(fields.from) || '?'}` };
  if (who === 'operator' || who === 'agent') return { who, title: who === 'agent' ? `${title} (the agent's own words)` : title };
  return { who: 'runner', title };
}

/** A whole transcript at once. */
export function parseTranscript(text: string): { items: TranscriptItem[]; summary: TranscriptSummary } {
  const parser = new TranscriptParser();
  for (const line of text.split('\n')) parser.push(line);
  parser.flushPrompt();
  return { items: parser.items, summary: parser.summary };
}
