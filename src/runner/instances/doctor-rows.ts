import type { Instance } from '../../config/instance.js';
import { describeError } from '../../errors.js';
import type { CheckRow } from '../../sandbox/container/preflight.js';
import { claudeAuthStatus, credentialFix, credentialOrigin, type TickEnvironmentParts } from '../harnesses/claude-credentials.js';
import { fatalFix } from '../tick/fatal-fix.js';
import { readPausedReason } from '../tick/paused.js';
import { loadState } from '../../state/runner-state.js';

/**
 * `agent-kernel doctor`'s rows about ticks: whether Claude Code has credentials for an
 * unattended tick (in the environment a tick gives it, without a model call), and whether
 * the instance is paused.
 */

export interface RunnerRowsOptions {
  /** The harness binary (runner.command, default claude). */
  harnessCommand: string;
  /** false when the harness row already failed: nothing to ask. */
  harnessFound: boolean;
  /** The parts of the environment a tick gives the harness (secrets/secrets.ts tickEnvironmentParts); a thrown error becomes the row. */
  environment: () => Promise<TickEnvironmentParts>;
}

const NAME = 'claude login';

function definedOnly(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The credentials row: logged in (and from where), or logged out with the commands that fix it. */
export async function credentialsRow(instance: Instance | undefined, options: RunnerRowsOptions): Promise<CheckRow> {
  if (instance && instance.config.runner.harness !== 'claude-code') {
    return { name: NAME, status: 'skipped', detail: `the ${instance.config.runner.harness} harness: its credentials are not checked here (docs/runner.md: Credentials for unattended ticks)` };
  }
  if (!options.harnessFound) return { name: NAME, status: 'skipped', detail: 'no Claude Code to ask' };
  const name = instance?.name ?? '<name>';
  let parts: TickEnvironmentParts;
  try {
    parts = await options.environment();
  } catch (error) {
    return { name: NAME, status: 'failed', detail: `the secrets cannot be read: ${describeError(error)}`, fix: `fix runner.secrets_dir (agent-kernel config ${name})` };
  }
  try {
    const auth = await claudeAuthStatus(options.harnessCommand, { ...definedOnly(parts.base), ...parts.secrets, ...parts.configured });
    if (!auth.loggedIn) {
      return {
        name: NAME,
        status: 'not-ready',
        detail: `Claude Code is logged out${instance ? ` for ${name}'s ticks` : ''}: no ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN or login of its own (claude auth status)`,
        fix: credentialFix(name).join('\n'),
      };
    }
    const from = auth.variable && instance ? ` from ${credentialOrigin(auth.variable, parts)}` : '';
    return { name: NAME, status: 'ok', detail: `logged in with ${auth.source}${from} (not tried against the API: that costs a model call; the first tick does)` };
  } catch (error) {
    return { name: NAME, status: 'failed', detail: describeError(error), fix: 'check that runner.command is Claude Code 2.1 or newer (claude --version)' };
  }
}

/**
 * The paused row: a paused instance runs no tick, whatever the other rows say. The steps come
 * from the host's own record of the tick that paused it (state.json), never from the file,
 * which the agent can write; of the file only its first line is shown, as its words.
 */
export async function pausedRow(instance: Instance): Promise<CheckRow> {
  const reason = await readPausedReason(instance.paths);
  if (reason === undefined) return { name: 'ticks', status: 'ok', detail: `not paused (no ${instance.paths.paused})` };
  const last = (await loadState(instance.paths.state).catch(() => undefined))?.last;
  const fatal = last?.error_class === 'fatal' && last.error ? last : undefined;
  const steps = fatal?.error ? fatalFix(instance, fatal.error) : [`kernel-runner resume ${instance.name}   (once the cause is fixed)`];
  const said = (reason.split('\n')[0] ?? '').slice(0, 200);
  return {
    name: 'ticks',
    status: 'not-ready',
    mark: 'PAUSED',
    detail: fatal ? `paused by tick ${fatal.tick} (${fatal.started}): ${(fatal.error ?? '').split('\n')[0]}` : `paused: ${instance.paths.paused} says "${said}"`,
    fix: steps.join('\n'),
  };
}
