/**
 * Waiting in tests: on a condition, never for a fixed time. `waitFor` polls a probe until it holds
 * and fails naming what it waited for once the deadline passes, so a test is as fast as the code
 * under it and a slow machine only makes it slower, never red. A fixed `sleep` is left only where a
 * test asserts that something does NOT happen within a period (each such call says so).
 */

/** Resolves after `ms` milliseconds. Only for asserting that nothing happens in a period. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` every `intervalMs` (default 10 ms) until it returns something truthy and resolves
 * with that value; rejects with "timed out after … waiting for `what`" after `timeoutMs`
 * (default 10 s). A probe that throws fails the wait at once.
 */
export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  what: string,
  options: { timeoutMs?: number; intervalMs?: number } | number = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 10 } = typeof options === "number" ? { timeoutMs: options } : options;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
