/**
 * Arguments no tool accepts: wrong types, out-of-range and non-integer numbers, huge
 * strings, unknown keys, missing fields, plus random junk from a seeded generator (so a
 * failure can be reproduced). Shared by the unit fuzz test and the stdio fuzz test.
 */

export { seededRandom } from '../../../bench/lib/seeded-random.mjs';

/** Longer than any text type() takes: refused by the terminal layer, which names the configured cap (not here: not a USAGE error). */
export const HUGE = 'x'.repeat(2_000_000);

function junk(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * 9);
  switch (pick) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return (random() - 0.5) * 10 ** Math.floor(random() * 20);
    case 3:
      return String.fromCharCode(...Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 0xd7ff)));
    case 4:
      return depth > 2 ? [] : Array.from({ length: Math.floor(random() * 4) }, () => junk(random, depth + 1));
    case 5:
      return depth > 2 ? {} : { [`k${Math.floor(random() * 100)}`]: junk(random, depth + 1) };
    case 6:
      return -1;
    case 7:
      return 1e308;
    default:
      return 'C-c';
  }
}

/** Arguments that must each be refused by `tool`. */
export function malformedArguments(tool: string, random: () => number): unknown[] {
  const unknownKey = { bogus: 1 };
  const cases: Record<string, unknown[]> = {
    login: [unknownKey, { tty: 0 }],
    open: [{ command: 5 }, { command: '' }, { command: HUGE }, { command: null }, { command: ['bash'] }, { command: 'bash', extra: true }],
    type: [
      {},
      { tty: 0 },
      { tty: 0, expect: 'bash' },
      { tty: '0', expect: 'bash', text: 'ls' },
      { tty: -1, expect: 'bash', text: 'ls' },
      { tty: 20, expect: 'bash', text: 'ls' },
      { tty: 1.5, expect: 'bash', text: 'ls' },
      { tty: 1e300, expect: 'bash', text: 'ls' },
      { tty: 0, expect: '', text: 'ls' },
      { tty: 0, expect: 'bash', text: 42 },
      { tty: 0, expect: 'bash', text: 'ls', enter: 'yes' },
      { tty: 0, expect: 'bash', text: 'ls', colour: 'red' },
      { tty: null, expect: null, text: null },
    ],
    // A timeout over 50 s is capped, not refused (wait.ts): not here.
    wait: [{ timeout: -1 }, { timeout: '5' }, { timeout: null }, { timeout: [] }, { timout: 5 }],
    close: [{}, { tty: -1 }, { tty: 20 }, { tty: 'all' }, { tty: 2.5 }, { tty: 0, force: true }],
  };
  const fixed = cases[tool] ?? [];
  const random20 = Array.from({ length: 20 }, () => {
    // Always include one key the tool does not know, so no random case is accidentally valid.
    const value = { [`zz${Math.floor(random() * 1000)}`]: junk(random) } as Record<string, unknown>;
    for (const key of ['tty', 'expect', 'text', 'enter', 'timeout', 'command']) if (random() < 0.4) value[key] = junk(random);
    return value;
  });
  return [...fixed, ...random20];
}
