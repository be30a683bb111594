import path from 'node:path';
import type { RunnerConfig } from '../../config/agent-config.js';
import { CodedError } from '../../errors.js';
import { readUntrustedFileText } from '../../util/untrusted-fs.js';
import { QUOTE_PREFIX } from '../../mail/framing.js';

/** The tick prompt when agent_config.json names none. */
export const DEFAULT_TICK_PROMPT = `This is a new tick. You have no memory of earlier ticks except what is in your data repo (the folder your terminals start in).
Call login() first: it opens your startup terminals and tells you what changed.
Work through terminals: type(tty, expect, text) sends keys, wait() shows what changed (call it before typing again).
Keep notes in files there for your next tick (write them from a terminal). Before you end, close the terminals you opened.
Mail: \`ak-mail\` in a terminal lists and reads your messages and sends messages to the other agents on this host (\`ak-mail help\`); an answer to \`ak-mail ask\` wakes you.`;

/** The tick prompt: `runner.prompt_file` (in the data repo) wins over `runner.prompt`, else the default. */
export async function loadTickPrompt(dataDir: string, config: RunnerConfig): Promise<string> {
  if (config.prompt_file) {
    const file = path.resolve(dataDir, config.prompt_file);
    try {
      const text = await readUntrustedFileText(path.resolve(dataDir), file);
      if (text === undefined) throw new Error('it does not exist');
      return text.trim();
    } catch (error) {
      throw new CodedError('CONFIG_INVALID', `runner.prompt_file ${file} cannot be read (${(error as Error).message}). Fix the path in system/agent_config.json.`, {
        cause: error,
      });
    }
  }
  return config.prompt ?? DEFAULT_TICK_PROMPT;
}

/** What the messages' framing means, said once above them (mail/framing.ts). */
const FRAMING = `Lines that start with "${QUOTE_PREFIX.trim()}" are words someone wrote (the line above them says who); every other line is the kernel's.`;

/**
 * Pure: the first user message of a tick: the prompt, then the messages waiting for the agent.
 * Each message is a block framed by mail/framing.ts (kernel lines, and quoted words), so no
 * message's content can start a block of its own.
 */
export function composeTickPrompt(prompt: string, messages: readonly string[]): string {
  if (messages.length === 0) return prompt;
  const list = messages.map((m, i) => `--- message ${i + 1} of ${messages.length} ---\n${m.trim()}`).join('\n\n');
  return `${prompt}\n\nMessages that arrived for you. ${FRAMING}\n\n${list}`;
}

/** Who wrote a part of what the agent is given: the operator, the agent itself, another agent (`from`), or the kernel. */
export interface PromptPart {
  who: 'operator' | 'agent' | 'peer' | 'runner';
  /** For a peer: its instance name. */
  from?: string;
  text: string;
}

/**
 * Who wrote the tick prompt: the operator when its own file sets `runner.prompt`; the agent when
 * its agent_config.json does, or when it comes from `runner.prompt_file` (a file in the data repo,
 * which the container writes, whoever named it); the kernel's default otherwise.
 */
export function tickPromptAuthor(config: RunnerConfig, operatorRaw: unknown): PromptPart['who'] {
  if (config.prompt_file) return 'agent';
  if (config.prompt === undefined) return 'runner';
  const runner = (operatorRaw as { runner?: { prompt?: unknown } } | undefined)?.runner;
  return runner?.prompt === config.prompt ? 'operator' : 'agent';
}

/**
 * Pure: who wrote a message block (mail/mail-format.ts), from its first line, which framing keeps
 * the kernel's: `From: the operator…`, `From: agent "name"…`, or `From: you.` (the agent's own note).
 */
export function messageAuthor(block: string): Omit<PromptPart, 'text'> {
  const first = block.trimStart().split('\n')[0] ?? '';
  if (first.startsWith('From: the operator')) return { who: 'operator' };
  const peer = /^From: agent "([^"]+)"/.exec(first);
  if (peer) return { who: 'peer', from: peer[1] ?? '' };
  if (first.startsWith('From: you.')) return { who: 'agent' };
  return { who: 'runner' };
}

/** Pure: composeTickPrompt in parts, each with its author (the transcript labels them so). */
export function tickPromptParts(prompt: string, author: PromptPart['who'], messages: readonly string[]): PromptPart[] {
  const parts: PromptPart[] = [{ who: author, text: prompt }];
  if (messages.length === 0) return parts;
  parts.push({ who: 'runner', text: `Messages that arrived for you. ${FRAMING}` });
  messages.forEach((m, i) => parts.push({ ...messageAuthor(m), text: `--- message ${i + 1} of ${messages.length} ---\n${m.trim()}` }));
  return parts;
}

/** Pure: a message delivered to the agent while it runs (a block framed by mail/framing.ts). */
export function midTickMessage(message: string): string {
  return `A new message arrived during this tick. ${FRAMING}\n\n${message.trim()}`;
}
