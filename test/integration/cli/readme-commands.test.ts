import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * README.md's operator table is the `--help` of both bins, row for row: a command added to a
 * bin (or a usage or summary changed) must be added to the table too, and the failure says
 * exactly which row to paste.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BINS = ['agent-kernel', 'kernel-runner'] as const;

interface Row {
  command: string;
  summary: string;
}

/** `<bin> --help`: each command as `  <bin> <usage>` then `      <summary>`. */
function helpRows(bin: string): Row[] {
  const lines = execFileSync(process.execPath, [path.join(ROOT, 'dist', 'cli', `${bin}.js`), '--help'], { encoding: 'utf8' }).split('\n');
  const rows: Row[] = [];
  lines.forEach((line, i) => {
    if (line.startsWith(`  ${bin} `)) rows.push({ command: line.trim(), summary: (lines[i + 1] ?? '').trim() });
  });
  return rows;
}

/** The rows of the table under "## Operator commands": `| \`command\` | summary |`, with `\|` for a `|`. */
function readmeRows(): Row[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Operator commands\n'));
  const body = section.slice(0, section.indexOf('\n## ', 1));
  const rows: Row[] = [];
  for (const line of body.split('\n')) {
    const cells = /^\| `(.+)` \| (.+) \|$/.exec(line);
    if (cells) rows.push({ command: cells[1]!.replaceAll('\\|', '|'), summary: cells[2]!.replaceAll('\\|', '|') });
  }
  return rows;
}

/** A row as it must be written in README.md. */
function markdown(row: Row): string {
  return `| \`${row.command.replaceAll('|', '\\|')}\` | ${row.summary.replaceAll('|', '\\|')} |`;
}

describe("README.md's operator table", () => {
  it('has every command of both bins, with the usage and summary --help prints, and nothing else', () => {
    const help = BINS.flatMap(helpRows);
    const readme = readmeRows();
    expect(help.length).toBeGreaterThan(15);
    const inReadme = new Set(readme.map(markdown));
    const inHelp = new Set(help.map(markdown));
    const missing = help.map(markdown).filter((row) => !inReadme.has(row));
    const extra = readme.map(markdown).filter((row) => !inHelp.has(row));
    const problems = [
      ...(missing.length ? ['Add (or correct) these rows in the table under "## Operator commands" in README.md, exactly as written (they are what --help prints):', ...missing] : []),
      ...(extra.length ? ['Remove these rows from that table (no command prints them; a changed usage or summary shows up above as the row to write instead):', ...extra] : []),
    ];
    expect(problems.join('\n'), problems.join('\n')).toBe('');
  });

  it('lists the commands in the order --help does', () => {
    const order = (rows: Row[]) => rows.map((row) => row.command.split(' ').slice(0, 2).join(' '));
    expect(order(readmeRows())).toEqual(order(BINS.flatMap(helpRows)));
  });
});
