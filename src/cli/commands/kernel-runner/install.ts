import { realpathSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { resolveInstance } from '../../../config/instance.js';
import { validateInstanceName } from '../../../config/registry.js';
import { CodedError } from '../../../errors.js';
import { packageFiles } from '../../../config/package-files.js';
import { enableInstructions, renderUnit, unitEnvironment, unitName, unitPath } from '../../../runner/watch/service/systemd.js';
import { writeFileAtomic } from '../../../util/atomic-write.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

/** This package's kernel-runner bin (dist/cli/kernel-runner.js), absolute. */
function runnerBin(): string {
  return realpathSync(packageFiles().runnerBin);
}

export const installCommand: Command = {
  name: 'install',
  summary: 'Write a systemd user unit that runs watch for an instance and print how to enable it; --print shows the unit and writes nothing.',
  usage: 'install <name> [--print]',
  options: [
    ["--print", "show the unit and write nothing"],
  ],
  examples: [
    "kernel-runner install scout --print",
    "kernel-runner install scout",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: 'kernel-runner install <name> [--print]',
      options: { print: { type: 'boolean', default: false } },
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const print = values.print;
    const name = positionals[0] as string;
    const instance = await resolveInstance(name);
    const bin = runnerBin();
    if (!(await stat(bin).catch(() => undefined))) {
      throw new CodedError('HARNESS_MISSING', `${bin} does not exist: build agent-kernel first (npm run build), then run install again.`);
    }
    const unit = renderUnit({
      name: instance.name,
      workingDir: instance.paths.stateRoot,
      nodePath: process.execPath,
      binPath: bin,
      environment: unitEnvironment(process.env),
    });
    if (print) {
      out(unit);
      return EXIT.OK;
    }
    const file = unitPath(instance.name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, unit, 0o644);
    out(`Wrote ${file}\n${enableInstructions(instance.name)}\n`);
    return EXIT.OK;
  },
};

export const uninstallCommand: Command = {
  name: 'uninstall',
  summary: 'Remove the systemd user unit of an instance (stop it first).',
  usage: 'uninstall <name>',
  examples: [
    "kernel-runner uninstall scout",
  ],
  async run(args) {
    const { positionals } = parseCommandArgs(args, { usage: 'kernel-runner uninstall <name>', options: {}, positionals: { min: 1, max: 1 }, missing: 'Name an instance.' });
    const name = positionals[0] as string;
    validateInstanceName(name);
    const file = unitPath(name);
    const unit = unitName(name);
    if (!(await stat(file).catch(() => undefined))) {
      out(`No unit at ${file}: nothing to remove.\n`);
      return EXIT.OK;
    }
    await rm(file);
    // What `systemctl --user disable` would remove: the link that starts it at login.
    await rm(path.join(path.dirname(file), 'default.target.wants', unit), { force: true });
    out(`Removed ${file}\nIf it is running, stop it and reload systemd:\n  systemctl --user stop ${unit}; systemctl --user daemon-reload\n`);
    return EXIT.OK;
  },
};
