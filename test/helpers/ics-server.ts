/**
 * A local HTTP server for iCalendar feeds (`.ics` by URL), on a free loopback port: each path serves
 * the text set for it with an ETag and Last-Modified, answers conditional requests with 304 like a
 * real web server, and records every request so tests can see what was asked.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";

/** What one path serves. `body` may be a Buffer (for large or odd bodies). */
export interface FeedRoute {
  body: string | Buffer;
  contentType?: string;
  status?: number;
  /** Send ETag / Last-Modified and honour If-None-Match / If-Modified-Since (default true). */
  conditional?: boolean;
}

/** A running feed server. */
export interface IcsServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** `host:port`, for the egress guard's allow-list. */
  host: string;
  /** Serves `route` at `path` (replacing what was there; the Last-Modified moves on). */
  set(path: string, route: FeedRoute): void;
  /** Requests seen: method, path and the conditional headers sent. */
  requests: { method: string; path: string; ifNoneMatch?: string; ifModifiedSince?: string; status: number }[];
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 and a port the system picks. */
export async function startIcsServer(): Promise<IcsServer> {
  const routes = new Map<string, FeedRoute & { modified: Date }>();
  const requests: IcsServer["requests"] = [];
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const server = createServer((req: IncomingMessage, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const route = routes.get(path);
    const seen = { method: req.method ?? "GET", path, ifNoneMatch: req.headers["if-none-match"], ifModifiedSince: req.headers["if-modified-since"], status: 200 };
    requests.push(seen);
    if (route === undefined) {
      seen.status = 404;
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const body = typeof route.body === "string" ? Buffer.from(route.body) : route.body;
    const headers: Record<string, string> = { "content-type": route.contentType ?? "text/calendar; charset=utf-8" };
    if (route.conditional !== false) {
      const etag = `"${createHash("sha1").update(body).digest("hex").slice(0, 16)}"`;
      headers.etag = etag;
      headers["last-modified"] = route.modified.toUTCString();
      const since = req.headers["if-modified-since"];
      if (req.headers["if-none-match"] === etag || (req.headers["if-none-match"] === undefined && since !== undefined && Date.parse(since) >= Math.floor(route.modified.getTime() / 1000) * 1000)) {
        seen.status = 304;
        res.writeHead(304, headers).end();
        return;
      }
    }
    seen.status = route.status ?? 200;
    res.writeHead(seen.status, { ...headers, "content-length": String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    set(path, route) {
      clock += 60_000;
      routes.set(path, { ...route, modified: new Date(clock) });
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
