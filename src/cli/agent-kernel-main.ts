import { runCli } from './commands/main.js';

void runCli(
  'agent-kernel',
  {
    serve: async () => (await import('./commands/agent-kernel/serve.js')).serveCommand,
    kernel: async () => (await import('./commands/agent-kernel/kernel.js')).kernelCommand,
    ls: async () => (await import('./commands/agent-kernel/ls.js')).lsCommand,
    attach: async () => (await import('./commands/agent-kernel/attach.js')).attachCommand,
    container: async () => (await import('./commands/agent-kernel/container.js')).containerCommand,
    image: async () => (await import('./commands/agent-kernel/image.js')).imageCommand,
    egress: async () => (await import('./commands/agent-kernel/egress.js')).egressCommand,
    config: async () => (await import('./commands/agent-kernel/config.js')).configCommand,
    doctor: async () => (await import('./commands/agent-kernel/doctor.js')).doctorCommand,
    events: async () => (await import('./commands/agent-kernel/events.js')).eventsCommand,
    web: async () => (await import('./commands/agent-kernel/web.js')).webCommand,
    play: async () => (await import('./commands/agent-kernel/play.js')).playCommand,
  },
  process.argv.slice(2),
);
