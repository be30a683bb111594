import { runCli } from './main.js';

void runCli(
  'kernel-runner',
  {
    init: async () => (await import('./commands/init.js')).initCommand,
    ls: async () => (await import('./commands/instances.js')).instancesCommand,
    tick: async () => (await import('./commands/tick.js')).tickCommand,
    watch: async () => (await import('./commands/watch.js')).watchCommand,
    send: async () => (await import('./commands/send.js')).sendCommand,
    mail: async () => (await import('./commands/mail.js')).mailCommand,
    status: async () => (await import('./commands/status.js')).statusCommand,
    install: async () => (await import('./commands/install.js')).installCommand,
    uninstall: async () => (await import('./commands/install.js')).uninstallCommand,
    secret: async () => (await import('./commands/secret.js')).secretCommand,
    resume: async () => (await import('./commands/resume.js')).resumeCommand,
    rm: async () => (await import('./commands/remove.js')).removeCommand,
  },
  process.argv.slice(2),
);
