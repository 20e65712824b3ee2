import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import express, { type Request, type RequestHandler, type Response, type Router } from "express";
import type { Clock } from "../../core/clock.js";
import type { Logger } from "../../core/log/index.js";
import type { Store } from "../../core/storage/index.js";
import type { ArtifactShelf } from "../../sandbox/artifacts/index.js";
import { artifactsWeb } from "./artifacts-api.js";
import { webAccess } from "./auth.js";
import { chatApi, type ChatApiDeps } from "./chat-api.js";
import { chatFilesApi } from "./chat-files.js";
import type { ChatLog } from "./chat-log.js";
import { dashboardApi, type WebCore, type DashboardApiDeps } from "./dashboard-api.js";
import { secretFormRouter, secretsWebApi } from "./secret-form.js";
import { connectFormRouter, type ConnectWebDeps } from "./connect-form.js";
import { connectionsWebApi } from "./connections-api.js";
import type { SecretDesk } from "../../core/secrets/index.js";
import { setupApi, type SetupApiDeps } from "./setup-api.js";
import type { SetupStore } from "./setup-store.js";
import type { WebSessions } from "./sessions.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Where the front end's bundle is: `dist/webui` (built by `npm run build` from `webui/`). From the
 * sources (tests, tsx) that is `<repo>/dist/webui`; from an older compiled `dist/web/api`, `dist/webui`.
 */
export function bundleDir(): string {
  // Bundled server: dist/main.js or dist/chunks/*.js; sources: web/api.
  const candidates = [resolve(here, "webui"), resolve(here, "../webui"), resolve(here, "../../dist/webui"), resolve(here, "../../webui")];
  return candidates.find((dir) => existsSync(join(dir, "app.js"))) ?? candidates[0]!;
}

/** Content-Security-Policy of every page: our own script and styles only, nothing from elsewhere. */
const csp = ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"].join("; ");

const pageHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Familiar</title>
<link rel="stylesheet" href="/web/app.css">
<script src="/web/app.js" defer></script>
</head>
<body><div id="app"><p class="boot">Loading Familiar…</p></div>
<noscript>Familiar's web app needs JavaScript.</noscript></body>
</html>
`;

/** Everything the web app needs from the composition root. */
export interface WebAppDeps {
  store: Store;
  familiar: WebCore;
  chatLog: ChatLog;
  sessions: WebSessions;
  setup: SetupStore;
  clock: Clock;
  logger: Logger;
  allowRemote: boolean;
  secureCookies: boolean;
  /** The base URL people open (PUBLIC_URL, else the listening address), for sign-in links. */
  publicUrl: () => string;
  deliver: ChatApiDeps["deliver"];
  typing: ChatApiDeps["typing"];
  /** MAX_ATTACHMENT_BYTES: the largest file the web chat takes (as the messengers do). */
  maxFileBytes: number;
  channelStatus: DashboardApiDeps["channelStatus"];
  setupApi: Omit<SetupApiDeps, "setup" | "logger">;
  /** README.md text, served rendered at `/readme` (linked from the setup page). */
  readme: () => string | null;
  /** The secret desk: `/secret/:token` one-time forms and `/api/web/secrets`. */
  secrets?: SecretDesk;
  /** The person's artifacts: `/api/web/artifacts` and each one's page at `/a/:id`. */
  artifacts?: ArtifactShelf;
  /** The connections: `/connect/:token` one-time forms and `/api/web/connections`. */
  connections?: ConnectWebDeps;
}

/**
 * The web app: first-run setup, dashboard and web chat as one page (`/`, `/setup`, `/dashboard`,
 * `/chat`, `/signin`) with its bundle under `/web/`, and its JSON API under `/api/web/`. Registers
 * the `/web` chat command that sends a one-time sign-in link on the messenger it was sent from.
 */
export function webApp(deps: WebAppDeps): Router {
  const access = webAccess({ store: deps.store, sessions: deps.sessions, setup: deps.setup, clock: deps.clock, logger: deps.logger, allowRemote: deps.allowRemote, secureCookies: deps.secureCookies });
  const router = express.Router();
  // Uploads read their own (larger) body: mounted before the JSON parser of /api/web.
  if (deps.artifacts) {
    const shelf = deps.artifacts;
    router.use(chatFilesApi({ store: deps.store, log: deps.chatLog, clock: deps.clock, maxFileBytes: deps.maxFileBytes, deliver: deps.deliver, load: (personId, id) => shelf.load(personId, id), gate: access.gate, requireSession: access.requireSession }));
  }
  router.use(access.router);
  router.use("/api/web", access.requireSession);
  router.use(dashboardApi({ store: deps.store, familiar: deps.familiar, clock: deps.clock, channelStatus: deps.channelStatus }));
  router.use(chatApi({ store: deps.store, log: deps.chatLog, clock: deps.clock, deliver: deps.deliver, typing: deps.typing, presence: deps.familiar.presence, maxFileBytes: deps.maxFileBytes }));
  router.use(setupApi({ ...deps.setupApi, setup: deps.setup, logger: deps.logger }));
  if (deps.artifacts) {
    const requirePage: RequestHandler = (req, res, next) =>
      access.gate(req, res, () => {
        access.requirePageSession(req, res, next).catch(next);
      });
    router.use(artifactsWeb({ shelf: deps.artifacts, requirePage, goalTitle: async (id) => (await deps.store.goals.getGoal(id))?.title ?? null }));
  }
  if (deps.secrets) {
    router.use(secretsWebApi(deps.secrets));
    router.use(secretFormRouter(deps.secrets, deps.publicUrl));
  }
  if (deps.connections) {
    router.use(connectionsWebApi(deps.connections));
    router.use(connectFormRouter(deps.connections, deps.publicUrl));
  }

  const headers = (res: Response, type: string) =>
    res.set({ "Content-Type": type, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Content-Security-Policy": csp });
  const page: RequestHandler = (req, res) => access.gate(req, res, () => (headers(res, "text/html; charset=utf-8"), res.send(pageHtml)));
  for (const path of ["/", "/setup", "/chat", "/signin", "/dashboard", "/dashboard/:tab"]) router.get(path, page);

  router.get("/web/:asset", (req: Request, res: Response, next) => {
    const types: Record<string, string> = { "app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8" };
    const name = String(req.params.asset);
    const type = types[name];
    if (!type) return next();
    const file = join(bundleDir(), name);
    if (!existsSync(file)) return void res.status(503).type("text/plain").send("The web app is not built: run npm run build.");
    headers(res, type);
    res.send(readFileSync(file));
  });

  router.get("/readme", (req, res, next) =>
    access.gate(req, res, () => {
      const text = deps.readme();
      if (text === null) return next();
      renderReadme(text).then(
        (html) => {
          headers(res, "text/html; charset=utf-8");
          res.send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Familiar · README</title><link rel="stylesheet" href="/web/app.css"></head><body><main class="readme">${html}</main></body></html>`);
        },
        (err: unknown) => next(err),
      );
    }),
  );

  deps.familiar.commands.register("web", "a one-time link to sign in to Familiar's web app (dashboard and chat)", async ({ person }) => {
    const token = deps.sessions.createLink(person.id);
    const base = deps.publicUrl().replace(/\/$/, "");
    const remoteNote = deps.allowRemote ? "" : " (this Familiar only serves its own machine; set LOCAL_CHAT_ALLOW_REMOTE=true to open it elsewhere)";
    return { text: `Open ${base}/signin#token=${token} within 15 minutes to sign in${remoteNote}. The link works once; don't share it.` };
  });

  return router;
}

/** README as HTML with GitHub-style heading ids; raw HTML in it is shown as text, never run. */
async function renderReadme(text: string): Promise<string> {
  // Loaded on the first visit of /readme only: the server does not need it otherwise.
  const { Marked } = await import("marked");
  const marked = new Marked({
    renderer: {
      html: ({ text: raw }) => escapeHtml(raw),
      heading({ tokens, depth }) {
        const inner = this.parser.parseInline(tokens);
        const id = inner.toLowerCase().replace(/<[^>]*>/g, "").replace(/&[a-z#0-9]+;/g, "").replace(/[^a-z0-9 -]/g, "").trim().replace(/ /g, "-");
        return `<h${depth} id="${id}">${inner}</h${depth}>\n`;
      },
    },
  });
  return marked.parse(text, { async: false });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
