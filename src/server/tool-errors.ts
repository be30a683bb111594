import { CallToolRequestSchema, type JSONRPCMessage, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_ARGUMENTS, describeArguments } from './tools/context.js';

/** A call that works, per tool: what the model should try next after a malformed one. */
const EXAMPLES: Readonly<Record<string, string>> = {
  login: 'login()',
  open: 'open() for bash, or open({command: "python3"})',
  type: 'type({tty: 0, expect: "bash", text: "ls"}), or type({tty: 0, expect: "python3", text: "C-c"}) for a key',
  wait: 'wait(), or wait({timeout: 10})',
  close: 'close({tty: 0})',
};

/** A tool name no tool has, in the tools' own words. */
export function unknownTool(name: unknown, tools: readonly string[]): string {
  const quoted = typeof name === 'string' ? JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name) : '';
  const what = name === undefined ? 'The request names no tool' : `There is no tool ${typeof name === 'string' ? (name === '' ? 'with an empty name' : quoted) : `named by ${kindOf(name)}`}`;
  return `UNKNOWN_TOOL: ${what}. The tools are ${tools.join(', ')}: call login() first, then wait() to look and type() to act.`;
}

function usage(tool: string, problem: string): string {
  const example = EXAMPLES[tool];
  return `USAGE: ${tool}() was not run, nothing happened: ${problem}.${example ? ` Try ${example}.` : ''}`.replace(/\.\./g, '.');
}

/** A value's kind in words: "an array", "a number", "null". */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * A call whose arguments the tool's schema refused, in the tools' own words: what was wrong
 * (each problem once), that nothing happened, and a call that works.
 */
export function invalidArguments(tool: string, issues: ReadonlyArray<{ message: string }>): string {
  const problems = [...new Set(issues.flatMap((issue) => issue.message.split('\n')).map((line) => line.trim()).filter(Boolean))];
  return usage(tool, problems.join('; '));
}

/**
 * What is wrong with a tools/call request before the SDK parses it, in the tools' words; undefined:
 * nothing the SDK would not explain itself. The SDK answers these with a raw schema dump as an
 * internal error (arguments that are not an object, a name that is not a string), or loses them
 * (a `__proto__` key vanishes when it copies the arguments, so it was never refused).
 */
export function malformedCall(request: unknown, tools: readonly string[]): string | undefined {
  const { name, arguments: args } = ((request as { params?: unknown } | undefined)?.params ?? {}) as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || !tools.includes(name)) return unknownTool(name, tools);
  if (args === undefined) return undefined;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return usage(name, `its arguments must be an object of named values (such as {"tty": 0}), not ${kindOf(args)}`);
  }
  if (Object.hasOwn(args, '__proto__')) {
    return usage(name, `Unknown argument "__proto__": ${describeArguments(name, TOOL_ARGUMENTS.get(name) ?? [])}`);
  }
  return undefined;
}

/** One problem the SDK's request schema found, in words: "_meta must be an object". */
function describeIssue(issue: { path?: PropertyKey[]; code?: string; expected?: unknown }): string {
  const where = (issue.path ?? []).filter((p) => p !== 'params').map(String).join('.') || 'the request';
  if (issue.code === 'invalid_type' && typeof issue.expected === 'string') return `${where} must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
  return `${where} is not what MCP allows there`;
}

/**
 * A message with an id and a method that is not a JSON-RPC request the SDK accepts (params that
 * are not an object, a _meta that is not one): the SDK drops it without a reply and the client
 * waits out its timeout. The error it gets instead; undefined for anything else.
 */
export function invalidRequestReply(message: unknown): JSONRPCMessage | undefined {
  const { id, method, params } = (message ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof method !== 'string' || isJSONRPCRequest(message)) return undefined;
  const meta = (params as { _meta?: unknown } | null | undefined)?._meta;
  const problem =
    params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))
      ? `params must be an object, not ${kindOf(params)}`
      : meta !== undefined && (meta === null || typeof meta !== 'object' || Array.isArray(meta))
        ? `params._meta must be an object, not ${kindOf(meta)}`
        : 'it does not have the shape of a JSON-RPC 2.0 request (params._meta.progressToken, if any, is a string or a number)';
  return {
    jsonrpc: '2.0',
    id,
    error: { code: -32600, message: `Invalid request ${JSON.stringify(method).slice(0, 80)}: ${problem}. Nothing was run. A tool call is {"method": "tools/call", "params": {"name": "wait", "arguments": {"timeout": 10}}}, as in wait({timeout: 10}).` },
  };
}

/**
 * The answer to a message the SDK would answer with a raw schema dump, lose, or not answer at
 * all, given before the SDK sees it (ScreenedTransport calls this on every message); undefined
 * for anything the SDK and the tools explain themselves. A tools/call whose name or arguments
 * are malformed gets an isError result in the tools' words; a message with an id and a method
 * that is not a request the SDK accepts gets a JSON-RPC error.
 */
export function screenMessage(message: JSONRPCMessage, tools: readonly string[]): JSONRPCMessage | undefined {
  if (!isJSONRPCRequest(message)) return invalidRequestReply(message);
  if (message.method !== 'tools/call') return undefined;
  const refused = (text: string): JSONRPCMessage => ({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text }], isError: true } });
  const malformed = malformedCall(message, tools);
  if (malformed) return refused(malformed);
  const parsed = CallToolRequestSchema.safeParse(message);
  if (parsed.success) return undefined;
  // Anything else the SDK's request schema refuses (a _meta that is not an object...): said plainly, not as an internal error.
  const name = String((message.params as { name?: unknown } | undefined)?.name);
  return refused(usage(name, `the tools/call request is malformed (${[...new Set(parsed.error.issues.map(describeIssue))].join('; ')})`));
}
