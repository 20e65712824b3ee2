import { createServer, type Server } from "node:http";
import express, { type Express, type Router } from "express";
import type { Logger } from "../../core/log/index.js";

/** Bytes of an unread request body drained after its response (to keep a small request's connection alive) before the connection is closed. */
const UNREAD_BODY_DRAIN_LIMIT = 64 * 1024;

/** A component's health as shown by `GET /healthz`. */
export interface HealthCheck {
  name: string;
  check(): Promise<{ ok: boolean; [detail: string]: unknown }>;
}

/**
 * The one express app of a Familiar process: health, local web chat, webhooks and the dashboard
 * API are mounted on it. Routers are added before `listen`.
 */
export class HttpServer {
  readonly app: Express;
  private server: Server | null = null;

  /**
   * @param scrubJson every JSON response body passes through it (core/log/redaction.ts `SecretRegistry.scrubDeep`:
   *   configured tokens, vault values in every encoding, token shapes), so no API returns a secret.
   */
  constructor(
    private readonly logger: Logger,
    private readonly checks: HealthCheck[],
    scrubJson?: <T>(body: T) => T,
  ) {
    this.app = express();
    this.app.disable("x-powered-by");
    if (scrubJson) {
      this.app.use((_req, res, next) => {
        const json = res.json.bind(res);
        res.json = (body?: unknown) => json(scrubJson(body));
        next();
      });
    }
    this.app.set("trust proxy", false);
    // A response sent before its request's body was read in full (a refusal, a 404, a sign-in gate):
    // Node reads and discards the rest to keep the connection alive, so an endless body sent to any
    // route would be read whole. Past UNREAD_BODY_DRAIN_LIMIT the connection is closed instead.
    this.app.use((req, res, next) => {
      res.once("finish", () => {
        if (req.complete) return;
        let drained = 0;
        req.on("data", (chunk: Buffer) => {
          drained += chunk.length;
          if (drained > UNREAD_BODY_DRAIN_LIMIT) req.socket.destroy();
        });
        req.resume();
      });
      next();
    });
    // Browsers ask for it on every page; there is none.
    this.app.get("/favicon.ico", (_req, res) => void res.status(204).end());
    this.app.get("/healthz", async (_req, res) => {
      const results: Record<string, unknown> = {};
      let ok = true;
      for (const c of this.checks) {
        try {
          const r = await c.check();
          results[c.name] = r;
          ok &&= r.ok;
        } catch (err) {
          results[c.name] = { ok: false, error: (err as Error).message };
          ok = false;
        }
      }
      res.status(ok ? 200 : 503).json({ ok, ...results });
    });
  }

  /** Mounts a router at `path` (default root). */
  mount(router: Router, path = "/"): void {
    this.app.use(path, router);
  }

  /** Starts listening. Resolves with the bound port (useful with port 0). Throws on EADDRINUSE etc. */
  async listen(host: string, port: number): Promise<number> {
    // Unknown API routes answer JSON like the rest of the API (not express's HTML page).
    this.app.use("/api", (req, res) => void res.status(404).json({ error: `no route ${req.method} ${req.originalUrl}` }));
    // Every other unknown route answers here too: express's final handler would first read the whole request body.
    this.app.use((req, res) => void res.status(404).type("text/plain").send(`Not found: ${req.method} ${req.path}`));
    this.app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      const status = typeof (err as { status?: unknown }).status === "number" ? (err as { status: number }).status : 500;
      if (status >= 500) this.logger.error({ err }, "HTTP handler failed");
      res.status(status).json({ error: status >= 500 ? "internal error" : (err as Error).message });
    });
    const server = createServer(this.app);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address();
    return typeof address === "object" && address ? address.port : port;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
