import { CodedError } from '../../errors.js';
import { classifyHarnessError } from './classify.js';
import { parseClaudeCodeLine } from './claude-code.js';
import type { Harness, HarnessEvent } from './harness.js';
import { mcpConfigFile } from './mcp-server-spec.js';

/**
 * `custom`: any agent CLI, from a command template in `runner.command`, for example
 *   "my-agent --mcp-config {mcp_config} --prompt {prompt}"
 * The template is split into words like a shell would (quotes '...' and "...", backslash
 * escapes; no variables, globs or pipes: nothing runs through a shell), then `{prompt}`
 * and `{mcp_config}` are replaced inside each word, so a prompt with spaces stays one
 * argument. Without `{prompt}` the prompt is the last argument, after `--`.
 *
 * How it gets our MCP server: `{mcp_config}` is the path of the tick's generated MCP config
 * in Claude Code's format (`{"mcpServers": {"agent-kernel": {"command", "args", "env"}}}`),
 * also given as AGENT_KERNEL_MCP_CONFIG in the environment. The server there is behind the
 * runner's tap (mcp-tap.ts): a tick whose command never lists our tools fails.
 *
 * Output: lines that are Claude Code stream-json are understood (a wrapper that speaks it
 * gets result and error classification, context tracking); anything else is only kept in the
 * tick's transcript, and then exit code 0 means success. Messages that arrive mid-tick wait
 * for the next tick (no stdin protocol is assumed). It runs in the private harness folder
 * (cwd and PWD) with the operator's HOME: the command is the operator's own.
 */

/** Pure: split a command template into words, as a POSIX shell would (quotes and backslashes only). */
export function splitCommandTemplate(template: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < template.length && '"\\$`'.includes(template[i + 1]!)) word += template[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < template.length) {
      word += template[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new CodedError('CONFIG_INVALID', `runner.command: unclosed ${quote} quote in ${JSON.stringify(template)}. Fix it in the operator's configuration (agent-kernel config <name> shows where).`);
  if (inWord) words.push(word);
  return words;
}

/** Pure: the argv of a custom harness from its template. */
export function customArgv(template: string, values: { prompt: string; mcpConfig: string }): string[] {
  const words = splitCommandTemplate(template);
  if (words.length === 0) {
    throw new CodedError('CONFIG_INVALID', 'runner.command is empty: the custom harness needs a command template such as "my-agent --prompt {prompt}".');
  }
  const hasPrompt = words.some((w) => w.includes('{prompt}'));
  const argv = words.map((w) => w.replaceAll('{prompt}', values.prompt).replaceAll('{mcp_config}', values.mcpConfig));
  // The prompt is the agent's: appended after "--", one starting with "-" stays an operand, not options.
  if (!hasPrompt) argv.push('--', values.prompt);
  return argv;
}

export const customHarness: Harness = {
  name: 'custom',
  mcpStatus: 'tap',
  stopSignal: 'SIGINT',
  exitCodeIsResult: true,
  invocation(setup) {
    const template = setup.config.command;
    if (!template) {
      throw new CodedError(
        'CONFIG_INVALID',
        `runner.harness is "custom" but runner.command is not set: give a command template such as "my-agent --mcp-config {mcp_config} --prompt {prompt}" in the operator's configuration (agent-kernel config <name> shows where).`,
      );
    }
    const mcpConfig = mcpConfigFile(setup.workDir, setup.mcpServer);
    const [command, ...args] = customArgv(template, { prompt: setup.prompt, mcpConfig: mcpConfig.path });
    return {
      command: command!,
      args,
      env: { ...setup.env, PWD: setup.cwd, AGENT_KERNEL_MCP_CONFIG: mcpConfig.path },
      cwd: setup.cwd,
      interactiveStdin: false,
      files: [mcpConfig],
    };
  },
  credentialsHelp({ secretsDir, name }) {
    return `Give the command the credentials it needs: one file per environment variable in ${secretsDir}, then \`kernel-runner resume ${name}\``;
  },
  parseLine(line): HarnessEvent[] {
    return line.trimStart().startsWith('{') ? parseClaudeCodeLine(line) : [];
  },
  classify(signals, now) {
    // Nothing understood (plain output): the exit code decides.
    if (signals.resultSubtype === undefined && signals.assistantError === undefined && signals.resultIsError === undefined) return undefined;
    return classifyHarnessError(signals, now);
  },
};
