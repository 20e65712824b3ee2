import { Router, type Response } from "express";
import { z } from "zod";
import type { BotAccount } from "../../core/channels/index.js";
import type { PersonId } from "../../core/ids.js";
import type { Logger } from "../../core/log/index.js";
import { OpenAIModelClient, type SwitchableModelClient } from "../../core/model/index.js";
import { webContext } from "./auth.js";
import { plainErrors } from "./plain-errors.js";
import { MessengerSetupError, pageMessengers, restartNotes, type MessengerSettings } from "./messenger-settings.js";
import { defaultBaseUrl, providers, type Provider, type SetupStore } from "./setup-store.js";
import type { MessengerInfo } from "./messenger-status.js";

/** What the setup API needs. */
export interface SetupApiDeps {
  setup: SetupStore;
  model: SwitchableModelClient;
  logger: Logger;
  /** Names of model settings set in the environment (they win over the page). */
  envModel: { vars: string[]; model: string | null; baseURL: string | null };
  modelTimeoutMs: number;
  messengers: () => MessengerInfo[];
  /** WhatsApp's pairing state and QR drawn as text, or null when WhatsApp is off. */
  whatsappQr: () => Promise<{ state: string; qr: string | null } | null>;
  /** Applies messenger settings entered on the page (without a restart). */
  messengerSetup: MessengerSettings;
  /** Familiar's computer: whether sandboxes run here, and why not. */
  computer?: () => ComputerStatus;
  /** The model also judges proactive messages whenever one is configured (NOTIFY_MODEL_JUDGEMENT; default true). */
  notificationJudgement?: boolean;
  /** How other devices reach this Familiar (for the setup page's "your phone" section). */
  devices?: () => DeviceAccess;
  /**
   * Connecting the signed-in person's own messenger account: the accounts they already have per
   * messenger, and a fresh /link code for them (valid 10 minutes; `LinkCodes.issue`).
   */
  ownAccounts?: {
    linked: (personId: PersonId) => Promise<{ channel: string; accountId: string }[]>;
    issueCode: (personId: PersonId) => string;
  };
}

/** What the setup page shows to connect one's own account on a messenger. */
export interface OwnAccountCode {
  code: string;
  expiresInMinutes: number;
  /** Familiar's account there (who to send the code to). */
  bot: BotAccount | null;
  /** A link that opens the chat with the code filled in (Telegram's `?start=` deep link), else null. */
  openUrl: string | null;
}

/** How other devices reach this Familiar, as the setup page explains it. */
export interface DeviceAccess {
  /** LOCAL_CHAT_ALLOW_REMOTE: other devices may sign in. */
  allowRemote: boolean;
  /** Familiar listens on more than loopback (HOST). */
  listensBeyondLoopback: boolean;
  /** The address a phone opens (PUBLIC_URL, else this machine's network address), or null. */
  network: string | null;
  publicUrlSet: boolean;
  https: boolean;
}

const NO_COMPUTER: ComputerStatus = { state: "off", reason: "not part of this build", languages: [] };

/** Familiar's computer as the setup page and `/healthz` show it. */
export interface ComputerStatus {
  state: "checking" | "on" | "off";
  /** Why it is off (null when on or still checking). */
  reason: string | null;
  /** Languages `run_code` accepts here. */
  languages: string[];
}

const connection = z
  .object({
    provider: z.enum(providers),
    baseURL: z.url({ protocol: /^https?$/, error: "Please give the server address as an http(s) URL, such as http://127.0.0.1:8080/v1." }).optional(),
    apiKey: z.string().trim().max(500, "That API key is too long (at most 500 characters).").optional(),
  })
  .strict();
const choice = connection.extend({ model: z.string().trim().min(1, "Please choose a model.").max(200, "A model name can be at most 200 characters.") }).strict();
const password = z.object({ password: z.string().min(10, "Please choose a password of at least 10 characters.").max(200, "A password can be at most 200 characters.") }).strict();
const modelList = z.object({ data: z.array(z.object({ id: z.string() }).loose()) }).loose();

/** The model client options for a choice (OpenAI proper wants `max_completion_tokens`). */
export function clientFor(c: { provider: Provider; baseURL: string; model: string; apiKey?: string | undefined }, timeout: number): OpenAIModelClient {
  return new OpenAIModelClient({
    model: c.model,
    baseURL: c.baseURL,
    timeout,
    ...(c.apiKey && { apiKey: c.apiKey }),
    tokenLimitParam: c.provider === "openai" ? "max_completion_tokens" : "max_tokens",
    settingsFrom: "page",
  });
}

function resolveBase(c: { provider: Provider; baseURL?: string | undefined }): string | null {
  return (c.baseURL ?? defaultBaseUrl[c.provider])?.replace(/\/+$/, "") ?? null;
}

/**
 * `POST /api/web/setup/messengers/:channel/code`: a /link code for the signed-in person to send to
 * Familiar's account on a running messenger from their own account (anyone signed in may: it joins
 * their conversation, nobody else's). Answers {@link OwnAccountCode}; 409 when the messenger is not running.
 */
function ownAccountApi(deps: Pick<SetupApiDeps, "messengers" | "ownAccounts">): Router {
  const router = Router();
  router.post("/api/web/setup/messengers/:channel/code", (req, res) => {
    const channel = z.enum(pageMessengers).safeParse(req.params.channel);
    if (!channel.success) return void res.status(404).json({ error: "No such messenger." });
    const info = deps.messengers().find((m) => m.channel === channel.data);
    if (!deps.ownAccounts || info?.state !== "running") return void res.status(409).json({ error: `${channel.data} is not running here yet: set it up first.` });
    const code = deps.ownAccounts.issueCode(webContext(req).person.id);
    const bot = info.bot;
    const openUrl = channel.data === "telegram" && bot?.url ? `${bot.url}?start=${code}` : null;
    const answer: OwnAccountCode = { code, expiresInMinutes: 10, bot, openUrl };
    res.json(answer);
  });

  return router;
}

/** Whether the session's person is the owner; else answers 403 and returns false. */
function ownerOnly(res: Response, role: string): boolean {
  if (role === "owner") return true;
  res.status(403).json({ error: "Only the owner of this Familiar can change its setup (on the Familiar machine, or signed in with the setup password)." });
  return false;
}

/**
 * First-run setup under `/api/web/setup` (mount behind `requireSession`; changes need an owner
 * session): the model (test by listing models and one tiny call, then store — key in the vault —
 * and switch the running process to it at once), the remote sign-in password, and each messenger's
 * needs and state. Model settings in the environment win: the page shows them and cannot change them.
 */
export function setupApi(deps: SetupApiDeps): Router {
  const router = Router();
  /** The key typed on the page, else the stored one when the same provider and server are chosen again. */
  const keyFor = (c: { provider: Provider; apiKey?: string | undefined }, base: string): string | undefined => {
    if (c.apiKey) return c.apiKey;
    const stored = deps.setup.model();
    return stored && stored.hasKey && stored.provider === c.provider && stored.baseURL === base ? deps.setup.apiKey() : undefined;
  };
  const envWins = (res: Response): boolean => {
    if (deps.envModel.vars.length === 0) return false;
    res.status(409).json({ error: `The model is set by environment variables (${deps.envModel.vars.join(", ")}); they win over this page. Unset them and restart to choose here.` });
    return true;
  };

  router.get("/api/web/setup", async (req, res) => {
    const { session, person } = webContext(req);
    const [stored, env, mine] = [deps.setup.model(), deps.envModel.vars.length > 0, (await deps.ownAccounts?.linked(person.id)) ?? []];
    res.json({
      owner: session.role === "owner",
      model: {
        configured: deps.model.configured,
        source: env ? "environment" : stored ? "setup" : "none",
        envVars: deps.envModel.vars,
        name: deps.model.configured ? deps.model.model : null,
        provider: env ? null : (stored?.provider ?? null),
        baseURL: env ? deps.envModel.baseURL : (stored?.baseURL ?? null),
        hasKey: env ? null : (stored?.hasKey ?? false),
      },
      notificationJudgement: deps.notificationJudgement ?? true,
      passwordSet: deps.setup.hasPassword(),
      messengers: deps.messengers().map((m) => ({ ...m, fromEnvironment: deps.messengerSetup.fromEnvironment(m.channel), restartNote: restartNotes[m.channel], yourAccounts: mine.filter((a) => a.channel === m.channel).map((a) => a.accountId) })),
      whatsapp: await deps.whatsappQr(),
      computer: deps.computer?.() ?? NO_COMPUTER,
      devices: deps.devices?.() ?? { allowRemote: false, listensBeyondLoopback: false, network: null, publicUrlSet: false, https: false } });
  });

  router.post("/api/web/setup/models", async (req, res) => {
    if (!ownerOnly(res, webContext(req).session.role) || envWins(res)) return;
    const body = connection.safeParse(req.body);
    if (!body.success) return void res.status(400).json({ error: plainErrors(body.error) });
    const base = resolveBase(body.data);
    if (!base) return void res.status(400).json({ error: "Please enter the server's address, e.g. http://127.0.0.1:8080/v1." });
    const apiKey = keyFor(body.data, base);
    if (body.data.provider === "openai" && !apiKey) return void res.status(400).json({ error: "OpenAI needs an API key: create one at platform.openai.com → API keys and paste it here." });
    try {
      const answer = await fetch(`${base}/models`, {
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
        signal: AbortSignal.timeout(15_000),
      });
      if (answer.status === 401 || answer.status === 403) return void res.status(400).json({ error: `The server refused the key (HTTP ${answer.status}). Check it and try again.` });
      if (!answer.ok) return void res.status(400).json({ error: `${base}/models answered HTTP ${answer.status}; is this an OpenAI-compatible server (URL ending in /v1)?` });
      const parsed = modelList.safeParse(await answer.json());
      if (!parsed.success) return void res.status(400).json({ error: `${base}/models did not answer with a model list; is this an OpenAI-compatible server?` });
      res.json({ baseURL: base, models: parsed.data.data.map((m) => m.id).sort() });
    } catch (err) {
      const reason = err instanceof Error && err.name === "TimeoutError" ? "no answer within 15 s" : "cannot connect";
      res.status(400).json({ error: `${base}: ${reason}. Is the server running and the URL right?` });
    }
  });

  router.post("/api/web/setup/model", async (req, res) => {
    if (!ownerOnly(res, webContext(req).session.role) || envWins(res)) return;
    const body = choice.safeParse(req.body);
    if (!body.success) return void res.status(400).json({ error: plainErrors(body.error) });
    const base = resolveBase(body.data);
    if (!base) return void res.status(400).json({ error: "Please enter the server's address." });
    const selected = { provider: body.data.provider, baseURL: base, model: body.data.model, apiKey: keyFor(body.data, base) };
    // One tiny call proves the model answers before anything is stored.
    const probe = new OpenAIModelClient({ model: selected.model, baseURL: base, timeout: 30_000, maxRetries: 0, ...(selected.apiKey && { apiKey: selected.apiKey }), tokenLimitParam: selected.provider === "openai" ? "max_completion_tokens" : "max_tokens", settingsFrom: "page" });
    let reply: string;
    try {
      const answer = await probe.complete({ messages: [{ role: "user", content: "Reply with the single word OK." }], maxTokens: 16 });
      reply = (answer.content ?? "").slice(0, 200);
    } catch (err) {
      return void res.status(400).json({ error: `The test call failed: ${(err as Error).message}` });
    }
    await deps.setup.saveModel(selected);
    deps.model.use(clientFor(selected, deps.modelTimeoutMs));
    deps.logger.info({ provider: selected.provider, baseURL: base, model: selected.model }, "model set on the setup page; in use from the next request");
    res.json({ ok: true, reply, model: selected.model });
  });

  router.post("/api/web/setup/messengers/:channel", async (req, res) => {
    if (!ownerOnly(res, webContext(req).session.role)) return;
    const channel = z.enum(pageMessengers).safeParse(req.params.channel);
    if (!channel.success) return void res.status(404).json({ error: "No such messenger." });
    try {
      const state = await deps.messengerSetup.apply(channel.data, req.body);
      res.json({ ok: true, state });
    } catch (err) {
      if (err instanceof MessengerSetupError) return void res.status(err.status).json({ error: err.message });
      throw err;
    }
  });

  router.use(ownAccountApi(deps));

  router.post("/api/web/setup/password", async (req, res) => {
    const ctx = webContext(req);
    if (!ownerOnly(res, ctx.session.role)) return;
    const body = password.safeParse(req.body);
    if (!body.success) return void res.status(400).json({ error: plainErrors(body.error) });
    await deps.setup.setPassword(body.data.password, ctx.person.id);
    res.json({ ok: true });
  });

  return router;
}
