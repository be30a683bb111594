#!/usr/bin/env node
import { attachCommand } from './commands/attach.js';
import { containerCommand } from './commands/container.js';
import { doctorCommand } from './commands/doctor.js';
import { imageCommand } from './commands/image.js';
import { lsCommand } from './commands/ls.js';
import { serveCommand } from './commands/serve.js';
import { runCli } from './main.js';

await runCli('agent-kernel', [serveCommand, lsCommand, attachCommand, containerCommand, imageCommand, doctorCommand], process.argv.slice(2));
