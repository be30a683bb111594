import { closeSync, openSync, readSync } from 'node:fs';
import { AGENT_KERNEL_TOOLS, type McpServerSpec } from '../harnesses/harness.js';

/**
 * The tap (cli/mcp-tap.ts) sits between a harness and our MCP server and writes down what the
 * MCP conversation shows, so the runner knows truthfully whether our server connected and
 * handed over its tools, and when the agent last used one, whatever the harness prints. Used
 * for every harness that cannot be asked (Claude Code answers an MCP status request itself).
 */

export type TapRecord =
  | { t: 'initialize'; at: number; client?: { name?: string; version?: string } }
  | { t: 'tools'; at: number; names: string[] }
  | { t: 'call'; at: number; tool: string }
  | { t: 'result'; at: number; tool: string; isError: boolean }
  | { t: 'exit'; at: number; code: number | null; signal: NodeJS.Signals | null };

/** Longest JSON-RPC line looked at; longer ones pass through unread (our results are far smaller). */
const MAX_LINE = 8 * 1024 * 1024;

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

/** Splits a byte stream into lines, keeping at most MAX_LINE bytes of an unfinished one. */
function lineSplitter(onLine: (line: string) => void): (chunk: Buffer) => void {
  let pending = '';
  let skipping = false;
  return (chunk) => {
    const text = pending + chunk.toString('utf8');
    const lines = text.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!skipping && line.trim()) onLine(line);
      skipping = false;
    }
    if (pending.length > MAX_LINE) {
      pending = '';
      skipping = true;
    }
  };
}

/**
 * What the tap records from the two directions of the stdio transport (newline-delimited
 * JSON-RPC): requests from the client, answers from the server matched by id.
 */
export function tapObserver(record: (entry: TapRecord) => void) {
  const asked = new Map<string | number, { method: string; tool?: string }>();
  const fromClient = lineSplitter((line) => {
    let message: Json | undefined;
    try {
      message = asObject(JSON.parse(line));
    } catch {
      return;
    }
    const method = typeof message?.method === 'string' ? message.method : undefined;
    const id = message?.id;
    if (!method || (typeof id !== 'string' && typeof id !== 'number')) return;
    const params = asObject(message?.params);
    if (method === 'initialize') {
      const info = asObject(params?.clientInfo);
      record({ t: 'initialize', at: Date.now(), client: { name: String(info?.name ?? ''), version: String(info?.version ?? '') } });
    }
    const tool = method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
    if (tool !== undefined) record({ t: 'call', at: Date.now(), tool });
    if (method === 'tools/list' || tool !== undefined) asked.set(id, { method, ...(tool === undefined ? {} : { tool }) });
  });
  const fromServer = lineSplitter((line) => {
    let message: Json | undefined;
    try {
      message = asObject(JSON.parse(line));
    } catch {
      return;
    }
    const id = message?.id;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const request = asked.get(id);
    if (!request) return;
    asked.delete(id);
    const result = asObject(message?.result);
    if (request.method === 'tools/list') {
      const tools = Array.isArray(result?.tools) ? result.tools : [];
      record({ t: 'tools', at: Date.now(), names: tools.map((tool) => String(asObject(tool)?.name ?? '')).filter(Boolean) });
    } else {
      record({ t: 'result', at: Date.now(), tool: request.tool ?? '', isError: message?.error !== undefined || result?.isError === true });
    }
  });
  return { fromClient, fromServer };
}

/** Pure: the server spec that starts `server` behind the tap, recording to `recordFile`. */
export function tappedServer(server: McpServerSpec, tapCli: string, recordFile: string, nodePath: string = process.execPath): McpServerSpec {
  return { command: nodePath, args: [tapCli, recordFile, '--', server.command, ...server.args], env: server.env };
}

/** What the tap has recorded so far, as the runner needs it. */
export interface TapState {
  /** The harness listed our tools (all five of them). */
  connected: boolean;
  /** The tools listed, when some of ours were missing. */
  listed?: string[];
  /** Our server exited (before the harness did). */
  serverExited?: { code: number | null; signal: string | null };
  /** The latest tool listing, call or result (epoch ms): the harness is alive and the agent acting. */
  lastActivityAt?: number;
  calls: number;
}

/** Pure: the state after more records. */
export function tapState(records: readonly TapRecord[], start: TapState = { connected: false, calls: 0 }): TapState {
  let state = start;
  for (const entry of records) {
    switch (entry.t) {
      case 'tools': {
        const missing = AGENT_KERNEL_TOOLS.filter((tool) => !entry.names.includes(tool));
        state = missing.length === 0 ? { ...state, connected: true, lastActivityAt: entry.at } : { ...state, listed: entry.names };
        break;
      }
      case 'call':
        state = { ...state, calls: state.calls + 1, lastActivityAt: entry.at };
        break;
      case 'result':
        state = { ...state, lastActivityAt: entry.at };
        break;
      case 'exit':
        state = { ...state, serverExited: { code: entry.code, signal: entry.signal } };
        break;
      case 'initialize':
        break;
    }
  }
  return state;
}

/** Reads the tap's record file as it grows (host-private: written only by the tap the runner started). */
export class TapLog {
  private offset = 0;
  private pending = '';
  private state: TapState = { connected: false, calls: 0 };

  constructor(readonly file: string) {}

  /** The state with whatever was appended since the last read. */
  read(): TapState {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return this.state;
    }
    const records: TapRecord[] = [];
    try {
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        const lines = (this.pending + buffer.subarray(0, n).toString('utf8')).split('\n');
        this.pending = lines.pop() ?? '';
        for (const line of lines) {
          try {
            if (line.trim()) records.push(JSON.parse(line) as TapRecord);
          } catch {
            // a torn line cannot happen (one append each); anything else is skipped
          }
        }
      }
    } finally {
      closeSync(fd);
    }
    this.state = tapState(records, this.state);
    return this.state;
  }
}
