import { describe, expect, it } from 'vitest';
import { describeLocation } from '../../../../src/tty/seen/elision-pointer.js';

const SCROLLBACK = '/data/tmp/sessions/tty_1/scrollback';
const SCREEN = '/data/tmp/sessions/tty_1/screen';

describe('the elision note\'s pointer', () => {
  it('names one command that prints every left-out line, across the scrollback and the screen, in order', () => {
    const note = describeLocation([
      { file: SCROLLBACK, from: 52, to: 162 },
      { file: SCREEN, from: 1, to: 30, rows: true },
    ]);
    expect(note).toBe(`they are lines 52-162 of ${SCROLLBACK} and rows 1-30 of ${SCREEN}; print them all with \`sed -n 52,162p ${SCROLLBACK}; sed -n 1,30p ${SCREEN}\``);
  });

  it('for many lines, says they are read in parts and gives the first part\'s command', () => {
    const note = describeLocation([
      { file: `${SCROLLBACK}.1`, from: 11, to: 4000 },
      { file: SCROLLBACK, from: 1, to: 700 },
    ]);
    expect(note).toBe(`they are lines 11-4000 of ${SCROLLBACK}.1 and lines 1-700 of ${SCROLLBACK}; read them in parts of 200 lines, the first with \`sed -n 11,210p ${SCROLLBACK}.1\``);
  });
});
