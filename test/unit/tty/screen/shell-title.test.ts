import { describe, expect, it } from 'vitest';
import { parseShellTitle } from '../../../../src/tty/screen/shell-integration.js';

const key = '0123456789abcdef';

describe('the shell title that tells how a command ended', () => {
  it('reads the status and the end time (microseconds) its own shell set', () => {
    expect(parseShellTitle(`ak-${key}-9-1795636469032878`, key)).toEqual({ exitCode: 9, endedAt: 1795636469032 });
    expect(parseShellTitle(`ak-${key}-130-1795636469032878`, key)).toEqual({ exitCode: 130, endedAt: 1795636469032 });
  });

  it('ignores a title with another key, no key, or a shape its shell never sets', () => {
    const cases = [
      `ak-fedcba9876543210-9-1795636469032878`,
      `ak-${key}-9-`,
      `ak-${key}-9-17956364`,
      `ak-${key}-1000-1795636469032878`,
      `ak-${key}-9-1795636469032878-0`,
      `ak-${key}--9-1795636469032878`,
      `xak-${key}-9-1795636469032878`,
      'vim',
      '',
    ];
    for (const title of cases) expect(parseShellTitle(title, key), title).toBeUndefined();
    expect(parseShellTitle(`ak-${key}-9-1795636469032878`, undefined)).toBeUndefined();
    expect(parseShellTitle('ak--9-1795636469032878', '')).toBeUndefined();
  });
});
