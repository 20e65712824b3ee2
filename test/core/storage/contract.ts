/**
 * The store contract: one suite every `Store` adapter must pass (SQLite, MongoDB). It speaks only
 * the public ports in core/storage/ports.ts, so a behaviour checked here is a behaviour core code may
 * rely on whatever the adapter.
 *
 * Usage, in an adapter's test file:
 *
 *   describeStoreContract("sqlite", async () => {
 *     const store = openSqliteStore({ path: tmpFile });
 *     return { store, cleanup: async () => { await store.close(); rmSync(tmpFile); } };
 *   });
 *
 * The factory is called before each test and must return an empty store; `cleanup` runs after it.
 */
import { afterEach, beforeEach, describe } from "vitest";
import type { Store } from "../../../core/storage/ports.js";
import { authorizationContract } from "./contract/authorization.js";
import { conversationContract } from "./contract/conversation.js";
import { journalMemoryContract } from "./contract/journal-memory.js";
import { miscContract } from "./contract/misc.js";
import { outboxContract } from "./contract/outbox.js";
import { personsContract } from "./contract/persons.js";
import type { StoreFactory } from "./contract/support.js";
import { tasksContract } from "./contract/tasks.js";

export type { StoreFactory } from "./contract/support.js";

/** Registers the whole contract suite under `describe(\`store contract: ${name}\`)`. */
export function describeStoreContract(name: string, factory: () => Promise<{ store: Store; cleanup(): Promise<void> }>): void {
  const make: StoreFactory = factory;
  describe(`store contract: ${name}`, () => {
    let current: { store: Store; cleanup(): Promise<void> } | undefined;
    beforeEach(async () => {
      current = await make();
    });
    afterEach(async () => {
      const done = current;
      current = undefined;
      await done?.cleanup();
    });
    const ctx = {
      store(): Store {
        if (!current) throw new Error("store contract: no store (the factory failed or the test ran outside beforeEach)");
        return current.store;
      },
    };
    personsContract(ctx);
    conversationContract(ctx);
    tasksContract(ctx);
    journalMemoryContract(ctx);
    authorizationContract(ctx);
    outboxContract(ctx);
    miscContract(ctx);
  });
}
