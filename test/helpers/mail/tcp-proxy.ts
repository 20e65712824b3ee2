/**
 * A TCP proxy on a free loopback port in front of a test server, to break connections the ways
 * networks do: `freeze()` silently stops forwarding on the open connections (a session that looks
 * alive but delivers nothing — an IDLE gone quiet), `reset()` tears them down with a TCP RST (a socket
 * error mid-session). New connections after either flow normally. `throttle()` slows what the server
 * sends (a sync that takes long enough to be killed halfway); `holdWhen()` stops a connection at the
 * first client command matching a pattern (a process caught between two steps, to be killed there).
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** Connections made through the proxy so far. */
  connections(): number;
  freeze(): void;
  reset(): void;
  /** Forwards at most `bytesPerSecond` from the server to each client (null: as fast as it comes). */
  throttle(bytesPerSecond: number | null): void;
  /**
   * From now on, a client write matching `pattern` is not forwarded, nor anything after it on that
   * connection (the command never reaches the server); resolves when that happens. One hold at a time.
   */
  holdWhen(pattern: RegExp): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  frozen: boolean;
  held: boolean;
  /** Server bytes waiting for the throttle. */
  queue: Buffer[];
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const open = new Set<Pair>();
  let count = 0;
  let rate: number | null = null;
  let hold: { pattern: RegExp; resolve: () => void } | null = null;
  let pump: NodeJS.Timeout | null = null;
  const TICK_MS = 20;
  const drain = () => {
    for (const pair of open) {
      let budget = rate === null ? Number.POSITIVE_INFINITY : Math.max(1, Math.round((rate * TICK_MS) / 1000));
      while (budget > 0 && pair.queue.length > 0 && !pair.frozen) {
        const head = pair.queue[0]!;
        const part = head.length <= budget ? head : head.subarray(0, budget);
        pair.queue[0] = head.subarray(part.length);
        if (pair.queue[0].length === 0) pair.queue.shift();
        budget -= part.length;
        pair.client.write(part);
      }
    }
  };
  const server: Server = createServer((client) => {
    count++;
    const upstream = connect({ host: "127.0.0.1", port: targetPort });
    const pair: Pair = { client, upstream, frozen: false, held: false, queue: [] };
    open.add(pair);
    client.on("data", (d) => {
      if (!pair.held && hold && hold.pattern.test(d.toString("latin1"))) {
        pair.held = true;
        const h = hold;
        hold = null;
        h.resolve();
      }
      if (!pair.frozen && !pair.held) upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (pair.frozen) return;
      if (rate === null && pair.queue.length === 0) client.write(d);
      else pair.queue.push(d);
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
      if (!pair.frozen && pair.queue.length === 0) end();
      else if (!pair.frozen) setTimeout(() => upstream.emit("close"), TICK_MS);
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
    throttle(bytesPerSecond) {
      rate = bytesPerSecond;
      if (rate !== null && !pump) pump = setInterval(drain, TICK_MS);
      if (rate === null) {
        drain();
        if (pump) clearInterval(pump);
        pump = null;
      }
    },
    holdWhen(pattern) {
      return new Promise<void>((resolve) => (hold = { pattern, resolve }));
    },
    async close() {
      if (pump) clearInterval(pump);
      pump = null;
      for (const pair of open) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      open.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
