import { text } from 'node:stream/consumers';
import { CodedError } from '../../../errors.js';
import { err } from '../command.js';

/**
 * A secret from stdin: piped, all of it; typed or pasted at a terminal, one line read with
 * echo off (nothing of it is drawn, so nothing lands in the scrollback). Ctrl-C cancels.
 */
export async function readSecretInput(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return text(stdin);
  err(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      stdin.on('data', (chunk: Buffer) => {
        for (const char of chunk.toString('utf8')) {
          if (char === '\r' || char === '\n') return resolve(value);
          if (char === '\u0003' || char === '\u0004') return reject(new CodedError('USAGE', 'Cancelled: nothing was written.'));
          if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
          else if (char === '\u0015') value = '';
          else if (char >= ' ') value += char;
        }
        return undefined;
      });
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    stdin.removeAllListeners('data');
    err('\n');
  }
}
