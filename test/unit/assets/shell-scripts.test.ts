import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { mailScript } from '../../../src/mail/mail-script.js';
import { probeCommand } from '../../../src/tty/probe/foreground-probe.js';

/**
 * The shell programs the kernel runs in the container live in assets/*.sh, where a shell
 * checker sees them: each parses (`bash -n`, and `sh -n` for a POSIX one) and passes Debian's
 * shellcheck. Without shellcheck the check is skipped on a developer's machine and fails in CI
 * (scripts/ensure-engine.sh installs it).
 */
const ASSETS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'assets');
const scripts = readdirSync(ASSETS).filter((name) => name.endsWith('.sh'));
const shellcheck = spawnSync('shellcheck', ['--version']).status === 0;
const scratch = mkdtempSync(path.join(tmpdir(), 'ak-shell-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The shell a script is written for, from its first line: sh or bash. */
function shellOf(text: string): 'sh' | 'bash' {
  return /^#!\/bin\/sh\b/.test(text) ? 'sh' : 'bash';
}

/** What bash -n (and sh -n) and shellcheck say about a script; empty when nothing. */
function problems(file: string, checker = shellcheck): string[] {
  const shell = shellOf(readFileSync(file, 'utf8'));
  const found: string[] = [];
  for (const parser of shell === 'sh' ? ['bash', 'sh'] : ['bash']) {
    const parsed = spawnSync(parser, ['-n', file], { encoding: 'utf8' });
    if (parsed.status !== 0) found.push(`${parser} -n: ${parsed.stderr.trim()}`);
  }
  if (checker) {
    const checked = spawnSync('shellcheck', ['-s', shell, '-f', 'gcc', file], { encoding: 'utf8' });
    if (checked.status !== 0) found.push(`shellcheck: ${checked.stdout.trim()}`);
  }
  return found;
}

describe('the shell programs in assets/', () => {
  it('are there: the mail command and the foreground probe, and the kernel runs them from there', () => {
    expect(scripts).toEqual(expect.arrayContaining(['ak-mail.sh', 'foreground-probe.sh']));
    expect(mailScript({ instance: 'it', view: '/v', outbox: '/o' })).toContain(readFileSync(path.join(ASSETS, 'ak-mail.sh'), 'utf8').split('\n').slice(-20).join('\n'));
    expect(probeCommand('x64')).toContain(readFileSync(path.join(ASSETS, 'foreground-probe.sh'), 'utf8'));
  });

  it('shellcheck is installed (in CI it must be: scripts/ensure-engine.sh installs Debian\'s)', () => {
    if (!shellcheck && !process.env.CI) return;
    expect(shellcheck, 'shellcheck is missing: apt-get install shellcheck, or run scripts/ensure-engine.sh').toBe(true);
  });

  for (const name of scripts) {
    it(`${name} parses and passes shellcheck`, () => {
      expect(problems(path.join(ASSETS, name))).toEqual([]);
    });
  }

  it('the mail script for an instance whose name and folders hold quotes, spaces and $( ) parses and keeps each value as it is', () => {
    const file = path.join(scratch, 'ak-mail');
    writeFileSync(file, mailScript({ instance: "it's", view: '/data/a b/$(reboot)', outbox: "/o'; rm -rf /" }));
    expect(problems(file, false)).toEqual([]);
    const me = execFileSync('sh', ['-c', `. ${JSON.stringify(file)} help >/dev/null; printf '%s|%s|%s' "$me" "$view" "$outbox"`], { encoding: 'utf8' });
    expect(me).toBe("it's|/data/a b/$(reboot)|/o'; rm -rf /");
  });

  it.skipIf(!shellcheck)('fails on a planted script: a syntax error, and what shellcheck warns about', () => {
    const broken = path.join(scratch, 'broken.sh');
    writeFileSync(broken, '#!/bin/bash\nif true; then echo x\n');
    expect(problems(broken).join('\n')).toMatch(/bash -n/);
    const sloppy = path.join(scratch, 'sloppy.sh');
    writeFileSync(sloppy, '#!/bin/sh\nfor f in $(ls *.txt); do cat $f; done\n');
    expect(problems(sloppy).join('\n')).toMatch(/shellcheck: .*SC2045/);
  });
});
