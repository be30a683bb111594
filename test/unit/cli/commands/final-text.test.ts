import { describe, expect, it } from 'vitest';
import { finalText } from '../../../../src/cli/commands/command.js';

describe('finalText', () => {
  it.each([
    ['\r(Reading database ... 5%\r(Reading database ... 100%\r(Reading database ... 6130 files and directories currently installed.)', '(Reading database ... 6130 files and directories currently installed.)'],
    ['Unpacking tmux (3.3a-3) ...', 'Unpacking tmux (3.3a-3) ...'],
    ['done\r', 'done'],
    ['\r', ''],
  ])('%j → %j', (line, shown) => expect(finalText(line)).toBe(shown));
});
