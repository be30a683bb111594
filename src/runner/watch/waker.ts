/**
 * A wait that something else can cut short: `wait(ms)` resolves after `ms`, or as soon as
 * `wake()` is called. A wake that comes while nobody waits is kept for the next wait, so
 * an event between two waits is never lost.
 */
export class Waker {
  private pending = false;
  private release: (() => void) | undefined;

  wake(): void {
    if (this.release) {
      const release = this.release;
      this.release = undefined;
      release();
    } else {
      this.pending = true;
    }
  }

  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.release = undefined;
        resolve();
      }, Math.max(0, ms));
      this.release = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
