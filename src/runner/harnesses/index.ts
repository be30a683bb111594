import { CodedError } from '../../errors.js';
import { claudeCodeHarness } from './claude-code.js';
import { codexHarness } from './codex.js';
import { customHarness } from './custom.js';
import { geminiCliHarness } from './gemini-cli.js';
import type { Harness } from './harness.js';
import { opencodeHarness } from './opencode.js';

const HARNESSES: Record<string, Harness> = {
  'claude-code': claudeCodeHarness,
  opencode: opencodeHarness,
  'gemini-cli': geminiCliHarness,
  codex: codexHarness,
  custom: customHarness,
};

/** The harness named in agent_config.json (`runner.harness`). */
export function getHarness(name: string): Harness {
  const harness = HARNESSES[name];
  if (!harness) {
    throw new CodedError(
      'CONFIG_INVALID',
      `Harness "${name}" is not available yet; kernel-runner tick drives: ${Object.keys(HARNESSES).join(', ')}. Set runner.harness in the operator's configuration (agent-kernel config <name> shows where).`,
      { details: { harness: name } },
    );
  }
  return harness;
}
