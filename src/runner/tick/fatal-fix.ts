import type { Instance } from '../../config/instance.js';
import { credentialFix } from '../harnesses/claude-credentials.js';

/**
 * Pure: the commands a person runs after a fatal tick (one that paused the instance), one
 * step a line, read from the harness's own words; the last step resumes. Claude Code's
 * messages are the ones known here; other causes get the generic advice.
 */
export function fatalFix(instance: Pick<Instance, 'name' | 'paths' | 'config'>, reason: string): string[] {
  const name = instance.name;
  const resume = `kernel-runner resume ${name}`;
  const claude = instance.config.runner.harness === 'claude-code';
  if (claude && /not logged in|please run \/login|invalid api key|invalid x-api-key|authentication[_ ]failed|oauth token (has )?expired|\b401\b/i.test(reason)) {
    return [...credentialFix(name), `agent-kernel doctor ${name}   (its "claude login" row says ok)`, resume];
  }
  if (/credit balance|billing|payment|\b402\b/i.test(reason)) {
    return [`add credit to the account of the tick's credentials (console.anthropic.com, Billing), or give it others: kernel-runner secret set ${name} ANTHROPIC_API_KEY`, resume];
  }
  if (/model\b.*\bnot (be )?found|not_found_error|does not exist|\b404\b/i.test(reason)) {
    return [`set runner.model in ${instance.paths.operatorConfig} to a model these credentials can use (agent-kernel config ${name} shows it)`, resume];
  }
  if (/prompt is too long/i.test(reason)) return [`shorten the tick prompt (runner.prompt or runner.prompt_file; agent-kernel config ${name})`, resume];
  return [`fix the cause above (agent-kernel doctor ${name} helps)`, resume];
}
