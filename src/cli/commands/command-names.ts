/**
 * Every command of both bins, by name, so that each bin can say which commands are the
 * other's without loading them (`kernel-runner events` → "events is an agent-kernel command").
 * Each bin's table is typed by its list: a command added to one must be added here.
 */
export const COMMAND_NAMES = {
  'agent-kernel': ['serve', 'kernel', 'ls', 'attach', 'container', 'image', 'egress', 'config', 'doctor', 'events', 'web', 'play'],
  'kernel-runner': ['init', 'ls', 'tick', 'watch', 'send', 'mail', 'status', 'logs', 'install', 'uninstall', 'secret', 'resume', 'rm', 'snapshot', 'snapshots', 'rollback', 'fork', 'suspend', 'move'],
} as const;

export type BinName = keyof typeof COMMAND_NAMES;
export type CommandName<B extends BinName> = (typeof COMMAND_NAMES)[B][number];
