import os from 'node:os';
import path from 'node:path';

/**
 * The two per-user folders every process of agent-kernel must agree on, from the environment
 * alone (no schema, no file read: the bridge that `serve` becomes when a kernel runs computes
 * them before anything else is loaded).
 */

/**
 * The operator's configuration and the instance registry: `$AGENT_KERNEL_CONFIG_DIR`, else
 * `$XDG_CONFIG_HOME/agent-kernel`, else `~/.config/agent-kernel`.
 */
export function configHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENT_KERNEL_CONFIG_DIR) return env.AGENT_KERNEL_CONFIG_DIR;
  const xdg = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(xdg, 'agent-kernel');
}

/**
 * The host-private state folder of every instance: `$AGENT_KERNEL_STATE_DIR`, else
 * `$XDG_STATE_HOME/agent-kernel`, else `~/.local/state/agent-kernel`. Tests point
 * AGENT_KERNEL_STATE_DIR at a temp folder.
 */
export function stateHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENT_KERNEL_STATE_DIR) return path.resolve(env.AGENT_KERNEL_STATE_DIR);
  const xdg = env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(xdg, 'agent-kernel');
}

/** Pure: may `name` name an instance (and so a folder)? `[A-Za-z0-9_.-]`, 1-64 of them, never `.` or containing `..`. */
export function isInstanceName(name: string): boolean {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(name) && !name.includes('..') && name !== '.';
}

/** Pure: the host-private state folder of one instance, `<stateHome>/instances/<name>`. */
export function instanceStateRoot(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stateHome(env), 'instances', name);
}
