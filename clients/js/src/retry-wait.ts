// The wait of a batch before its retry: flush() cuts it short, but never below the server's Retry-After;
// stop() ends it at once.
export class RetryWait {
  private sleeping: { timer: ReturnType<typeof setTimeout>; until: number; resolve: () => void } | null =
    null;

  /**
   * Waits `ms`; wake() cuts it short, but never below `minMs` (the server's Retry-After). The timer holds
   * the process open only with `holdProcess`.
   */
  sleep(ms: number, minMs: number, holdProcess: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      const start = Date.now();
      const timer = setTimeout(() => {
        this.sleeping = null;
        resolve();
      }, ms);
      if (!holdProcess) timer.unref?.();
      this.sleeping = { timer, until: start + minMs, resolve };
    });
  }

  /** Ends the wait now (`now`), or once its `minMs` has passed. */
  wake(now = false): void {
    const s = this.sleeping;
    if (s === null) return;
    clearTimeout(s.timer);
    const rest = now ? 0 : s.until - Date.now();
    if (rest <= 0) {
      this.sleeping = null;
      s.resolve();
      return;
    }
    s.timer = setTimeout(() => {
      this.sleeping = null;
      s.resolve();
    }, rest);
  }
}
