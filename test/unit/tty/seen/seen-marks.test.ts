import { describe, expect, it } from 'vitest';
import type { GoneRows } from '../../../../src/tty/seen/relocation.js';
import { SeenMarks } from '../../../../src/tty/seen/seen-marks.js';

const mark = { row: 0, history: 0, digest: '' };
const gone = (rows: number, maybeSeen = 0, atLeast = false): GoneRows => ({ rows, maybeSeen, atLeast, limit: 1000 });

describe('SeenMarks: rows gone unseen across restarts', () => {
  it('keeps a gone note for saving until a reply carries it, and not after', () => {
    const marks = new SeenMarks();
    marks.restore(mark, undefined, undefined, gone(50));
    expect(marks.untold).toEqual(gone(50));
    marks.shown('reply-1', { abs: 10, scrolls: 0, digest: 'd' });
    // The reply may arrive though the server dies before it knows: told twice, the rows would count twice.
    expect(marks.untold).toBeUndefined();
    expect(marks.gone).toBeUndefined();
  });

  it('tells a note the former server never told together with rows trimmed since, as one count', () => {
    const marks = new SeenMarks();
    marks.restore(mark, undefined, gone(50, 20), gone(300, 7, true));
    expect(marks.gone).toEqual({ rows: 50 + 7 + 300, maybeSeen: 20, atLeast: true, limit: 1000 });
  });
});
