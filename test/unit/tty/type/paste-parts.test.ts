import { describe, expect, it } from 'vitest';
import { PASTE_PART_BYTES, pasteParts } from '../../../../src/tty/type/paste-parts.js';

describe('pasteParts', () => {
  it('cuts a long paste into parts of whole lines, none over the size, that join back into it', () => {
    for (let trial = 0; trial < 200; trial++) {
      const lines = Array.from({ length: Math.floor(Math.random() * 400) }, () => 'é'.repeat(Math.floor(Math.random() * 120)));
      const text = lines.join('\n');
      const parts = pasteParts(text);
      expect(parts.join('\n')).toBe(text);
      for (const part of parts) if (part.includes('\n')) expect(Buffer.byteLength(part) + 1).toBeLessThanOrEqual(PASTE_PART_BYTES);
    }
  });

  it('keeps a short paste whole and gives a line longer than a part a part of its own', () => {
    expect(pasteParts('a\nb')).toEqual(['a\nb']);
    expect(pasteParts(`a\n${'x'.repeat(3000)}\nb`)).toEqual(['a', 'x'.repeat(3000), 'b']);
  });
});
