import type { Command } from './command.js';

/** Pure: the number of single-character edits that turn `a` into `b` (Levenshtein). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * Pure: what to say about a command `bin` does not have: the other bin's command of that
 * name, else the nearest of its own ("did you mean"), else where the list is. One or two
 * lines, never the whole help.
 */
export function suggestCommand(bin: string, name: string, names: Readonly<Record<string, readonly string[]>>): string {
  const shown = JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
  const list = `Run "${bin} --help" for its commands.`;
  const other = Object.keys(names).find((b) => b !== bin && names[b]!.includes(name));
  if (other) return `unknown command ${shown}: it is a command of ${other}. Run: ${other} ${name} …  ("${other} ${name} --help" for its options)`;
  const own = names[bin] ?? [];
  const near = own
    .map((candidate) => ({ candidate, distance: candidate.startsWith(name) && name.length >= 2 ? 0.5 : editDistance(name.toLowerCase(), candidate) }))
    .filter(({ candidate, distance }) => distance <= Math.max(1, Math.floor(candidate.length / 3)))
    .sort((x, y) => x.distance - y.distance)[0];
  if (near) return `unknown command ${shown}. Did you mean "${bin} ${near.candidate}"? ${list}`;
  const elsewhere = Object.keys(names)
    .filter((b) => b !== bin)
    .flatMap((b) => names[b]!.filter((candidate) => editDistance(name.toLowerCase(), candidate) <= 1).map((candidate) => `${b} ${candidate}`))[0];
  if (elsewhere) return `unknown command ${shown}. Did you mean "${elsewhere}"? ${list}`;
  return `unknown command ${shown}. ${list}`;
}

/** Pure: one command's `--help`: usage, what it does, its options, examples. */
export function commandHelp(bin: string, command: Command): string {
  const options = command.options ?? [];
  const width = Math.max(0, ...options.map(([flag]) => flag.length));
  return [
    `usage: ${bin} ${command.usage}`,
    '',
    command.summary,
    ...(options.length ? ['', 'Options:', ...options.map(([flag, what]) => `  ${flag.padEnd(width)}  ${what}`)] : []),
    ...(command.examples?.length ? ['', 'Examples:', ...command.examples.map((example) => `  ${example}`)] : []),
    '',
  ].join('\n');
}
