/**
 * Local test sites for the browser tests: an "allowed" site on 127.0.0.1 (let through by
 * PRIVATE_HOSTS_ALLOWED) and a "forbidden" recorder on another loopback port that must never see a
 * request. Pages are plain HTML strings keyed by path.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A recorded request. */
export interface Hit {
  method: string;
  url: string;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A loopback HTTP server that serves `routes` and records every request (and WebSocket attempt). */
export class TestSite {
  readonly hits: Hit[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly routes: Map<string, (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void>,
  ) {}

  static async start(): Promise<TestSite> {
    const server = http.createServer();
    const site = new TestSite(server, new Map());
    server.on("request", (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        site.hits.push({ method: req.method ?? "", url: req.url ?? "", body, headers: req.headers });
        const path = (req.url ?? "/").split("?")[0]!;
        const route = site.routes.get(`${req.method} ${path}`) ?? site.routes.get(path);
        if (route) route(req, body, res);
        else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      });
    });
    server.on("upgrade", (req, socket) => {
      site.hits.push({ method: "UPGRADE", url: req.url ?? "", body: "", headers: req.headers });
      socket.destroy();
    });
    server.on("connect", (req, socket) => {
      site.hits.push({ method: "CONNECT", url: req.url ?? "", body: "", headers: req.headers });
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    return site;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** host:port for PRIVATE_HOSTS_ALLOWED. */
  get hostPort(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Serves an HTML page at `path` (any method unless `method` is given). */
  page(path: string, html: string, options: { method?: string; headers?: Record<string, string> } = {}): this {
    this.routes.set(options.method ? `${options.method} ${path}` : path, (_req, _body, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", ...options.headers }).end(html);
    });
    return this;
  }

  route(path: string, handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void): this {
    this.routes.set(path, handler);
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
