/** A small seeded generator (xorshift32): numbers in [0, 1), the same for the same seed. */
export function seededRandom(seed: number): () => number;
