/**
 * A TCP proxy on a free loopback port in front of a test server, to break connections the ways
 * networks do: `freeze()` silently stops forwarding on the open connections (a session that looks
 * alive but delivers nothing — an IDLE gone quiet), `reset()` tears them down with a TCP RST (a socket
 * error mid-session). New connections after either flow normally.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** Connections made through the proxy so far. */
  connections(): number;
  freeze(): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const open = new Set<{ client: Socket; upstream: Socket; frozen: boolean }>();
  let count = 0;
  const server: Server = createServer((client) => {
    count++;
    const upstream = connect({ host: "127.0.0.1", port: targetPort });
    const pair = { client, upstream, frozen: false };
    open.add(pair);
    client.on("data", (d) => {
      if (!pair.frozen) upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (!pair.frozen) client.write(d);
    });
    const end = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
    client.on("close", end);
    upstream.on("close", () => {
      if (!pair.frozen) end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connections: () => count,
    freeze() {
      for (const pair of open) pair.frozen = true;
    },
    reset() {
      for (const pair of open) {
        open.delete(pair);
        pair.client.resetAndDestroy();
        pair.upstream.destroy();
      }
    },
    async close() {
      for (const pair of open) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      open.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
