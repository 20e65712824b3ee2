/**
 * Makes a function object from the source of an in-page script (`page-scripts.ts`), so Playwright
 * serialises and runs it in the page with its argument. The source is ours (a constant), never input.
 */
export function inPage<A, R>(source: string): (arg: A) => R {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval, @typescript-eslint/no-unsafe-call -- our own constant source, compiled once per call site
  const compiled: unknown = new Function(`return (${source});`)();
  if (typeof compiled !== "function") throw new TypeError("in-page script is not a function");
  return compiled as (arg: A) => R;
}
