import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../../../src/cli/commands/command-names.js';

/**
 * One CLI a person can discover: each bin's built program (dist/, as on PATH) says its version,
 * each command's options and examples, the command meant by a typo, and the other bin's commands
 * by name, each in a line or two instead of the whole help.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function run(bin: string, ...args: string[]) {
  const ran = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'cli', `${bin}.js`), ...args], { encoding: 'utf8', env: { ...process.env, AGENT_KERNEL_LOG_FORMAT: 'pretty' } });
  return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

describe.each(['agent-kernel', 'kernel-runner'] as const)('%s', (bin) => {
  it('--version prints the package version', () => {
    for (const flag of ['--version', '-V']) expect(run(bin, flag)).toMatchObject({ code: 0, stdout: `${bin} ${VERSION}\n` });
  });

  it('each command --help shows its usage, its options and examples', () => {
    for (const name of COMMAND_NAMES[bin]) {
      const { code, stdout } = run(bin, name, '--help');
      expect(code, `${bin} ${name} --help`).toBe(0);
      expect(stdout, `${bin} ${name} --help`).toMatch(new RegExp(`^usage: ${bin} ${name}\\b`));
      expect(stdout, `${bin} ${name} --help`).toMatch(new RegExp(`\\nExamples:\\n[\\s\\S]*${bin} ${name}\\b`));
      const usage = stdout.split('\n')[0]!;
      for (const flag of usage.match(/--[a-z][a-z-]+/g) ?? []) expect(stdout, `${bin} ${name} --help documents ${flag}`).toMatch(new RegExp(`\\n {2}${flag}\\b`));
    }
  });

  it('a typo gets "did you mean" in one line, with exit 2, not the whole help', () => {
    const typo = bin === 'agent-kernel' ? 'doctr' : 'stauts';
    const meant = bin === 'agent-kernel' ? 'doctor' : 'status';
    const { code, stdout, stderr } = run(bin, typo);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`${bin}: unknown command "${typo}". Did you mean "${bin} ${meant}"? Run "${bin} --help" for its commands.\n`);
  });
});

describe('the two bins point to each other', () => {
  it("a command of the other bin says which bin has it and how to run it", () => {
    for (const [bin, other] of [['agent-kernel', 'kernel-runner'], ['kernel-runner', 'agent-kernel']] as const) {
      for (const name of COMMAND_NAMES[other].filter((n) => !(COMMAND_NAMES[bin] as readonly string[]).includes(n))) {
        const { code, stderr } = run(bin, name);
        expect(code).toBe(2);
        expect(stderr, `${bin} ${name}`).toBe(`${bin}: unknown command "${name}": it is a command of ${other}. Run: ${other} ${name} …  ("${other} ${name} --help" for its options)\n`);
      }
    }
  });
});
