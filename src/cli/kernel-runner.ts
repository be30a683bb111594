#!/usr/bin/env node
import { initCommand } from './commands/init.js';
import { installCommand, uninstallCommand } from './commands/install.js';
import { instancesCommand } from './commands/instances.js';
import { sendCommand } from './commands/send.js';
import { statusCommand } from './commands/status.js';
import { tickCommand } from './commands/tick.js';
import { watchCommand } from './commands/watch.js';
import { runCli } from './main.js';

await runCli(
  'kernel-runner',
  [initCommand, instancesCommand, tickCommand, watchCommand, sendCommand, statusCommand, installCommand, uninstallCommand],
  process.argv.slice(2),
);
