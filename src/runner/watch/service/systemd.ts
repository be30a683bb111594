import os from 'node:os';
import path from 'node:path';
import { configHome, stateHome } from '../../../config/homes.js';

/**
 * A systemd user unit that runs `kernel-runner watch <name>`: written by
 * `kernel-runner install`, removed by `uninstall`.
 */

/** Environment variables a watch service needs from the installing shell (never secrets: those live in the secrets directory). */
export const PASSED_ENVIRONMENT = [
  'PATH',
  'DOCKER_HOST',
  'DOCKER_CONTEXT',
  'DOCKER_CERT_PATH',
  'DOCKER_TLS_VERIFY',
  'CONTAINER_HOST',
  'XDG_CONFIG_HOME',
  'XDG_STATE_HOME',
  'XDG_RUNTIME_DIR',
  'AGENT_KERNEL_CONFIG_DIR',
  'AGENT_KERNEL_STATE_DIR',
  'AGENT_KERNEL_RUNTIME_DIR',
  'AGENT_KERNEL_LOG_LEVEL',
  'LANG',
] as const;

export function unitName(name: string): string {
  return `agent-kernel-${name}.service`;
}

/** `~/.config/systemd/user/agent-kernel-<name>.service` (XDG_CONFIG_HOME respected, as systemd does). */
export function unitPath(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const configDir = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(configDir, 'systemd', 'user', unitName(name));
}

/** systemd's specifier character: a literal % is written %%. */
function escapeSpecifiers(text: string): string {
  return text.replace(/%/g, '%%');
}

/** One word of ExecStart=, double-quoted when it needs to be (C-style escapes inside). */
function quoteWord(word: string): string {
  const escaped = escapeSpecifiers(word);
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(escaped)) return escaped;
  return `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '$$$$')}"`;
}

/** `Environment="KEY=value"` with quotes and backslashes escaped. */
function environmentLine(key: string, value: string): string {
  return `Environment="${escapeSpecifiers(`${key}=${value}`).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export interface UnitOptions {
  readonly name: string;
  /** Where the watch runs: the instance's host-private state folder, never the data directory (the container writes there). */
  readonly workingDir: string;
  /** Absolute path of the node binary. */
  readonly nodePath: string;
  /** Absolute path of dist/cli/kernel-runner.js. */
  readonly binPath: string;
  readonly environment: Readonly<Record<string, string>>;
}

/** Pure: the unit file's text. */
export function renderUnit(options: UnitOptions): string {
  const exec = [options.nodePath, options.binPath, 'watch', options.name].map(quoteWord).join(' ');
  const env = Object.entries(options.environment)
    .filter(([, v]) => !/[\n\r]/.test(v))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => environmentLine(k, v));
  return [
    '# Written by kernel-runner install; remove with kernel-runner uninstall.',
    '[Unit]',
    `Description=agent-kernel watch for ${options.name}`,
    'After=network-online.target',
    'Wants=network-online.target',
    // Give up restarting the watcher itself after 5 failures in 10 minutes.
    'StartLimitIntervalSec=600',
    'StartLimitBurst=5',
    '',
    '[Service]',
    'Type=simple',
    // Taken verbatim (no quotes; spaces are fine), only specifiers need escaping.
    `WorkingDirectory=${escapeSpecifiers(options.workingDir)}`,
    ...env,
    `ExecStart=${exec}`,
    'Restart=on-failure',
    'RestartSec=10',
    // watch stops its tick (SIGINT, grace period, then kill) on SIGTERM; give it time.
    'KillSignal=SIGTERM',
    'KillMode=mixed',
    'TimeoutStopSec=120',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

/**
 * Pure: the environment copied into the unit from the installing process. The configuration
 * and state folders are pinned to the ones the operator's commands use now, whatever
 * systemd's own XDG variables would make them: a service with another state folder would
 * not find the instance's lock, seen marks and kernel.
 */
export function unitEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of PASSED_ENVIRONMENT) {
    const value = env[key];
    if (value) out[key] = value;
  }
  // A login shell's profile often adds ~/.local/bin again: each folder once, where it first came.
  if (out.PATH) out.PATH = [...new Set(out.PATH.split(':').filter((dir) => dir !== ''))].join(':');
  out.AGENT_KERNEL_CONFIG_DIR = configHome(env);
  out.AGENT_KERNEL_STATE_DIR = stateHome(env);
  return out;
}

export function enableInstructions(name: string): string {
  const unit = unitName(name);
  return [
    `Enable and start it:`,
    `  systemctl --user daemon-reload && systemctl --user enable --now ${unit}`,
    `Keep it running when you are logged out:`,
    `  loginctl enable-linger ${os.userInfo().username}`,
    `Follow it:`,
    `  journalctl --user -u ${unit} -f    (or kernel-runner status ${name})`,
  ].join('\n');
}
