/**
 * One word for a POSIX shell: in single quotes (each `'` written `'\''`), or as it is when it
 * holds only characters no shell treats specially and `always` is not set.
 */
export function shellQuote(word: string, always = false): string {
  if (!always && /^[A-Za-z0-9_./:=@%+-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
