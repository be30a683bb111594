/**
 * A tick's transcript (`tick-NNN.jsonl`, Claude Code's stream-json plus kernel-runner's own
 * lines) turned into items a page can show: the agent's text, tool calls with their
 * arguments and results, hook and runner decisions, errors. Pure. Everything here is
 * agent-controlled text: the page must render it as text, never as markup.
 */

export type TranscriptItem =
  | { kind: 'session'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'thinking'; text: string }
  | { kind: 'tool'; id: string; name: string; input: string; result?: string; isError?: boolean }
  | { kind: 'runner'; event: string; text: string }
  | { kind: 'error'; text: string }
  | { kind: 'result'; text: string; isError: boolean; costUsd?: number; durationMs?: number };

const MAX_FIELD = 20_000;

function cut(text: string): string {
  return text.length > MAX_FIELD ? `${text.slice(0, MAX_FIELD)}\n… (${text.length - MAX_FIELD} more characters)` : text;
}

function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (obj(part).type === 'text' ? str(obj(part).text) : `[${str(obj(part).type) || 'part'}]`)).join('\n');
  return JSON.stringify(content ?? '');
}

export function parseTranscript(text: string): TranscriptItem[] {
  const items: TranscriptItem[] = [];
  const tools = new Map<string, Extract<TranscriptItem, { kind: 'tool' }>>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let event: Record<string, unknown>;
    try {
      event = obj(JSON.parse(line));
    } catch {
      continue;
    }
    const type = str(event.type);
    if (type === 'system' && event.subtype === 'init') {
      const servers = Array.isArray(event.mcp_servers) ? event.mcp_servers.map((s) => `${str(obj(s).name)} ${str(obj(s).status)}`).join(', ') : '';
      items.push({ kind: 'session', text: `Session started: model ${str(event.model) || '?'}${servers ? `; MCP servers: ${servers}` : ''}` });
    } else if (type === 'system' && event.subtype === 'api_retry') {
      items.push({ kind: 'error', text: `API error ${String(event.error_status ?? '')}: retrying (attempt ${String(event.attempt ?? '?')})` });
    } else if (type === 'system') {
      items.push({ kind: 'runner', event: str(event.subtype) || 'system', text: cut(JSON.stringify(event)) });
    } else if (type === 'assistant' || type === 'user') {
      const content = obj(event.message).content;
      if (typeof content === 'string') {
        if (type === 'assistant') items.push({ kind: 'text', text: cut(content) });
        continue;
      }
      for (const part of Array.isArray(content) ? content.map(obj) : []) {
        if (part.type === 'text' && type === 'assistant') items.push({ kind: 'text', text: cut(str(part.text)) });
        else if (part.type === 'thinking') items.push({ kind: 'thinking', text: cut(str(part.thinking)) });
        else if (part.type === 'tool_use') {
          const item = { kind: 'tool' as const, id: str(part.id), name: str(part.name), input: cut(JSON.stringify(part.input ?? {}, null, 2)) };
          tools.set(item.id, item);
          items.push(item);
        } else if (part.type === 'tool_result') {
          const call = tools.get(str(part.tool_use_id));
          const result = cut(resultText(part.content));
          if (call) {
            call.result = result;
            if (part.is_error === true) call.isError = true;
          } else items.push({ kind: 'tool', id: str(part.tool_use_id), name: '(unknown call)', input: '', result, isError: part.is_error === true });
        }
      }
    } else if (type === 'result') {
      items.push({
        kind: 'result',
        text: cut(str(event.result) || str(event.subtype)),
        isError: event.is_error === true,
        ...(typeof event.total_cost_usd === 'number' ? { costUsd: event.total_cost_usd } : {}),
        ...(typeof event.duration_ms === 'number' ? { durationMs: event.duration_ms } : {}),
      });
    } else if (type === 'kernel_runner') {
      const { type: _t, tick: _k, time: _time, event: name, ...rest } = event;
      items.push({ kind: 'runner', event: str(name) || 'runner', text: cut(Object.keys(rest).length ? JSON.stringify(rest) : '') });
    } else if (type === 'rate_limit_event') {
      items.push({ kind: 'error', text: `Rate limited${event.resetsAt ? ` until ${String(event.resetsAt)}` : ''}` });
    }
  }
  return items;
}
