import { describe, expect, it } from 'vitest';
import { parseCommandArgs } from '../../../../src/cli/commands/args.js';
import type { Command } from '../../../../src/cli/commands/command.js';
import { attachCommand } from '../../../../src/cli/commands/agent-kernel/attach.js';
import { configCommand } from '../../../../src/cli/commands/agent-kernel/config.js';
import { containerCommand } from '../../../../src/cli/commands/agent-kernel/container.js';
import { doctorCommand } from '../../../../src/cli/commands/agent-kernel/doctor.js';
import { egressCommand } from '../../../../src/cli/commands/agent-kernel/egress.js';
import { eventsCommand } from '../../../../src/cli/commands/agent-kernel/events.js';
import { imageCommand } from '../../../../src/cli/commands/agent-kernel/image.js';
import { initCommand } from '../../../../src/cli/commands/kernel-runner/init.js';
import { installCommand, uninstallCommand } from '../../../../src/cli/commands/kernel-runner/install.js';
import { instancesCommand } from '../../../../src/cli/commands/kernel-runner/instances.js';
import { lsCommand } from '../../../../src/cli/commands/agent-kernel/ls.js';
import { sendCommand } from '../../../../src/cli/commands/kernel-runner/send.js';
import { serveCommand } from '../../../../src/cli/commands/agent-kernel/serve.js';
import { statusCommand } from '../../../../src/cli/commands/kernel-runner/status.js';
import { parseTickArgs, tickCommand } from '../../../../src/cli/commands/kernel-runner/tick.js';
import { watchCommand } from '../../../../src/cli/commands/kernel-runner/watch.js';
import { webCommand } from '../../../../src/cli/commands/agent-kernel/web.js';
import { isCodedError } from '../../../../src/errors.js';

const agentKernel = [serveCommand, lsCommand, attachCommand, configCommand, containerCommand, imageCommand, egressCommand, doctorCommand, eventsCommand, webCommand];
const kernelRunner = [initCommand, instancesCommand, tickCommand, watchCommand, sendCommand, statusCommand, installCommand, uninstallCommand];
const all: [string, Command, string][] = [
  ...agentKernel.map((c): [string, Command, string] => [`agent-kernel ${c.name}`, c, 'agent-kernel']),
  ...kernelRunner.map((c): [string, Command, string] => [`kernel-runner ${c.name}`, c, 'kernel-runner']),
];

async function usageMessage(command: Command, args: string[]): Promise<string> {
  const error: unknown = await command.run(args).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isCodedError(error) || error.code !== 'USAGE') throw new Error(`expected a USAGE error from ${command.name} ${args.join(' ')}, got ${String(error)}`);
  return error.message;
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('every command reads its flags one way', () => {
  it.each(all)('%s: an unknown flag is refused with the usage line to run instead, before anything happens', async (_what, command, bin) => {
    const message = await usageMessage(command, ['scout', '--bogus']);
    expect(message).toMatch(new RegExp(`^Unknown option --bogus\\. Usage: ${escape(bin)} ${escape(command.name)}\\b`));
  });

  it.each(all.filter(([, c]) => !['doctor', 'status', 'web'].includes(c.name) && c !== instancesCommand))(
    '%s: a missing argument is refused with the usage line',
    async (_what, command, bin) => {
      expect(await usageMessage(command, [])).toMatch(new RegExp(`[.?] Usage: ${escape(bin)} ${escape(command.name)}\\b`));
    },
  );

  it.each(all.filter(([, c]) => c !== sendCommand))('%s: an extra argument is named and refused', async (_what, command) => {
    expect(await usageMessage(command, ['a', 'b', 'c', 'd'])).toMatch(/^(Unexpected argument "[a-d]"|Unknown action "a")\. Usage: /);
  });
});

describe('parseCommandArgs', () => {
  const spec = { usage: 'x do <name> [--lines N] [--json]', options: { lines: { type: 'string' }, json: { type: 'boolean' } }, positionals: { min: 1, max: 1 } } as const;
  it.each([
    [['a', '--lines'], /^--lines needs a value\. Usage: x do/],
    [['a', '--lines', '--json'], /^--lines needs a value\. Usage: x do/],
    [['a', '--json=yes'], /^--json takes no value\. Usage: x do/],
    [['a', '-z'], /^Unknown option -z\. Usage: x do/],
    [[], /^Missing arguments\. Usage: x do/],
  ])('%j is refused', (args, message) => {
    expect(() => parseCommandArgs(args, spec)).toThrow(message);
  });

  it('takes options before, between and after positionals, --name=value, and -- for text that starts with a dash', () => {
    expect(parseCommandArgs(['--json', 'a', '--lines=5'], spec)).toMatchObject({ values: { json: true, lines: '5' }, positionals: ['a'] });
    expect(parseTickArgs(['-m', 'one', 'scout', '--message', 'two'])).toEqual({ name: 'scout', messages: ['one', 'two'] });
    expect(parseCommandArgs(['a', '--', '--json'], { ...spec, positionals: { min: 1, max: 2 } }).positionals).toEqual(['a', '--json']);
  });
});
