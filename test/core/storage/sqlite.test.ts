import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import { describeStoreContract } from "./contract.js";

const roots: string[] = [];

describeStoreContract("sqlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "familiar-sqlite-"));
  roots.push(dir);
  const store = openSqliteStore({ path: join(dir, "nested", "familiar.db") });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
