import { runCli } from './main.js';

void runCli(
  'agent-kernel',
  {
    serve: async () => (await import('./commands/serve.js')).serveCommand,
    kernel: async () => (await import('./commands/kernel.js')).kernelCommand,
    ls: async () => (await import('./commands/ls.js')).lsCommand,
    attach: async () => (await import('./commands/attach.js')).attachCommand,
    container: async () => (await import('./commands/container.js')).containerCommand,
    image: async () => (await import('./commands/image.js')).imageCommand,
    egress: async () => (await import('./commands/egress.js')).egressCommand,
    config: async () => (await import('./commands/config.js')).configCommand,
    doctor: async () => (await import('./commands/doctor.js')).doctorCommand,
    events: async () => (await import('./commands/events.js')).eventsCommand,
    web: async () => (await import('./commands/web.js')).webCommand,
    play: async () => (await import('./commands/play.js')).playCommand,
  },
  process.argv.slice(2),
);
