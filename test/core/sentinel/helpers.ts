/**
 * Shared test helpers for Sentinel: local HTTP servers on 127.0.0.1 that record what they receive,
 * and a SQLite store with one person.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { openSqliteStore, type SqliteStore } from "../../../core/storage/sqlite/index.js";
import type { PersonId } from "../../../core/ids.js";

/** A request as a test server received it. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A running local server. */
export interface TestServer {
  port: number;
  /** `127.0.0.1:<port>`, for PRIVATE_HOSTS_ALLOWED. */
  hostPort: string;
  origin: string;
  received: Received[];
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 answering with `handler` and recording every request. */
export async function startServer(handler: (req: Received, res: ServerResponse) => void): Promise<TestServer> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: Received = { method: req.method ?? "", path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hostPort: `127.0.0.1:${port}`,
    origin: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An in-memory SQLite store with one person. */
export async function storeWithPerson(name = "Ada"): Promise<{ store: SqliteStore; personId: PersonId }> {
  const store = openSqliteStore({ path: ":memory:" });
  const person = await store.persons.createPerson({ displayName: name });
  return { store, personId: person.id };
}
