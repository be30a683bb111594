import { runCli } from './commands/main.js';

void runCli(
  'kernel-runner',
  {
    init: async () => (await import('./commands/kernel-runner/init.js')).initCommand,
    ls: async () => (await import('./commands/kernel-runner/instances.js')).instancesCommand,
    tick: async () => (await import('./commands/kernel-runner/tick.js')).tickCommand,
    watch: async () => (await import('./commands/kernel-runner/watch.js')).watchCommand,
    send: async () => (await import('./commands/kernel-runner/send.js')).sendCommand,
    mail: async () => (await import('./commands/kernel-runner/mail.js')).mailCommand,
    status: async () => (await import('./commands/kernel-runner/status.js')).statusCommand,
    logs: async () => (await import('./commands/kernel-runner/logs.js')).logsCommand,
    install: async () => (await import('./commands/kernel-runner/install.js')).installCommand,
    uninstall: async () => (await import('./commands/kernel-runner/install.js')).uninstallCommand,
    secret: async () => (await import('./commands/kernel-runner/secret.js')).secretCommand,
    resume: async () => (await import('./commands/kernel-runner/resume.js')).resumeCommand,
    rm: async () => (await import('./commands/kernel-runner/remove.js')).removeCommand,
    snapshot: async () => (await import('./commands/kernel-runner/snapshots/snapshot.js')).snapshotCommand,
    snapshots: async () => (await import('./commands/kernel-runner/snapshots/snapshot.js')).snapshotsCommand,
    rollback: async () => (await import('./commands/kernel-runner/snapshots/rollback.js')).rollbackCommand,
    fork: async () => (await import('./commands/kernel-runner/snapshots/fork.js')).forkCommand,
    suspend: async () => (await import('./commands/kernel-runner/snapshots/suspend.js')).suspendCommand,
    move: async () => (await import('./commands/kernel-runner/snapshots/move.js')).moveCommand,
  },
  process.argv.slice(2),
);
