import { describe, expect, it } from "vitest";
import { PersonQueue } from "../../../core/runtime/person-queue.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("PersonQueue", () => {
  it("runs one person's work in order, one at a time, and different persons concurrently", async () => {
    const q = new PersonQueue(4);
    const log: string[] = [];
    let releaseA!: () => void;
    const gateA = new Promise<void>((r) => (releaseA = r));
    const a1 = q.run("a", async () => {
      log.push("a1 start");
      await gateA;
      log.push("a1 end");
    });
    const a2 = q.run("a", async () => void log.push("a2"));
    const b1 = q.run("b", async () => void log.push("b1"));
    await b1;
    await tick();
    expect(log).toEqual(["a1 start", "b1"]);
    releaseA();
    await Promise.all([a1, a2]);
    expect(log).toEqual(["a1 start", "b1", "a1 end", "a2"]);
  });

  it("keeps going after a failure and forgets idle persons", async () => {
    const q = new PersonQueue();
    await expect(q.run("a", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await q.run("a", async () => 42)).toBe(42);
    await tick();
    expect(q.size).toBe(0);
  });

  it("limits how many persons run at once", async () => {
    const q = new PersonQueue(2);
    let running = 0;
    let peak = 0;
    await Promise.all(
      ["a", "b", "c", "d", "e"].map((p) =>
        q.run(p, async () => {
          running++;
          peak = Math.max(peak, running);
          await tick();
          running--;
        }),
      ),
    );
    expect(peak).toBe(2);
  });

  it("refuses work after drain", async () => {
    const q = new PersonQueue();
    await q.drain(100);
    await expect(q.run("a", async () => 1)).rejects.toThrow(/closed/);
  });
});
