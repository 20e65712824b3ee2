/**
 * MessengerSetup on its own (app/messenger-setup.ts), with the real adapter factory, the real
 * encrypted vault in a temp dir and grammY against the fake Bot API on loopback: settings the
 * environment gives cannot be changed from the page; bad input is refused before anything is
 * built; a token is checked by starting the messenger (getMe) and only a token that started is
 * kept, encrypted and bound to the API's origin; a refused token changes nothing and the messenger
 * that ran before runs again; the old adapter stops before its replacement starts; at the next start
 * stored settings fill in what the environment leaves unset, and the environment wins.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MessengerSetup } from "../../app/messenger-setup.js";
import { createMessengers } from "../../app/messengers.js";
import type { ChannelAdapter, InboundEvent } from "../../core/channels/index.js";
import { loadConfig } from "../../core/config/index.js";
import { SHARED_OWNER, SecretVault } from "../../core/secrets/index.js";
import { openSqliteStore, type SqliteStore } from "../../core/storage/sqlite/index.js";
import { MessengerSetupError, MessengerStatus } from "../../web/api/index.js";
import { HttpServer } from "../../web/http/index.js";
import { FakeTelegramApi } from "../fakes/telegram-api.js";

const logger = pino({ level: "silent" });
let dir: string;
let fake: FakeTelegramApi;
let store: SqliteStore;
let vault: SecretVault;
let running: Map<string, ChannelAdapter>;
/** What happened to adapters, in order: `start telegram`, `stop telegram`. */
let events: string[];
let status: MessengerStatus;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "familiar-messenger-setup-"));
  fake = await FakeTelegramApi.start();
  store = openSqliteStore({ path: join(dir, "familiar.db") });
  vault = await SecretVault.open({ dataDir: dir });
  running = new Map();
  events = [];
  status = new MessengerStatus();
});
afterEach(async () => {
  for (const adapter of running.values()) await adapter.stop().catch(() => undefined);
  await fake.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A MessengerSetup over `env` (the process environment of this "start"). */
function setup(env: Record<string, string> = {}): MessengerSetup {
  const config = loadConfig({ DATA_DIR: dir, TELEGRAM_API_ROOT: fake.apiRoot, ...env });
  const deps = { http: new HttpServer(logger, []), logger, dataDir: dir, inbound: store.inbound };
  const sink = async (_event: InboundEvent) => ({ status: "accepted" as const });
  return new MessengerSetup({
    config,
    vault,
    logger,
    status,
    create: (effective) => createMessengers(effective, deps),
    // What the core would do: track it, and see when it starts and stops.
    install: (adapter) => {
      const tracked: ChannelAdapter = Object.assign(Object.create(adapter) as ChannelAdapter, {
        start: async (s: typeof sink) => (events.push(`start ${adapter.channel}`), adapter.start(s)),
        stop: async () => (events.push(`stop ${adapter.channel}`), adapter.stop()),
      });
      running.set(adapter.channel, tracked);
      return tracked;
    },
    running: (channel) => running.get(channel),
    sink,
    whatsappEnabled: () => false,
    setWhatsAppEnabled: async () => undefined,
  });
}

async function refusal(promise: Promise<unknown>): Promise<MessengerSetupError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MessengerSetupError);
  return err as MessengerSetupError;
}

describe("MessengerSetup", () => {
  it("refuses to change a messenger the environment configures, and refuses bad input before building anything", async () => {
    const fromEnv = setup({ TELEGRAM_BOT_TOKEN: fake.token });
    expect(fromEnv.fromEnvironment("telegram")).toBe(true);
    expect(fromEnv.fromEnvironment("discord")).toBe(false);
    const env = await refusal(fromEnv.apply("telegram", { token: "111:other-token" }));
    expect(env.status).toBe(409);
    expect(env.message).toContain("TELEGRAM_BOT_TOKEN");

    const bad = await refusal(setup().apply("telegram", { token: 42 }));
    expect(bad.status).toBe(400);
    // Said in words about the field, by the body's schema (not found out by building an adapter).
    expect(bad.message).toContain("token");
    expect(bad.message).not.toContain("configure nothing");
    expect(fake.callsOf("getMe")).toEqual([]);
    expect(vault.list(SHARED_OWNER)).toEqual([]);
  });

  it("checks a token by starting the messenger, then keeps it encrypted and bound to the API's origin", async () => {
    const page = setup();
    expect(await page.apply("telegram", { token: fake.token })).toBe("running");
    expect(fake.callsOf("getMe").length).toBeGreaterThan(0);
    expect(events).toEqual(["start telegram"]);
    expect(status.messengers().find((m) => m.channel === "telegram")!.state).toBe("running");
    expect(vault.list(SHARED_OWNER).map((s) => s.name)).toEqual(["familiar.telegram-token"]);
    expect(vault.substituteSecrets("{{secret:familiar.telegram-token}}", new URL(fake.apiRoot).origin, SHARED_OWNER)).toBe(fake.token);
    expect(() => vault.substituteSecrets("{{secret:familiar.telegram-token}}", "https://elsewhere.example", SHARED_OWNER)).toThrow();
    // Kept encrypted: the vault file never holds the token in the clear.
    expect(readFileSync(join(dir, "vault.json"), "utf8")).not.toContain(fake.token);
  });

  it("a refused token changes nothing: reported, not stored, and the messenger that ran before runs again", async () => {
    const page = setup();
    await page.apply("telegram", { token: fake.token });
    const err = await refusal(page.apply("telegram", { token: "999:refused-token" }));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^telegram did not start: .*(401|Unauthorized)/);
    expect(status.messengers().find((m) => m.channel === "telegram")!.state).toMatch(/^failed to start/);
    // The old adapter stopped before the new one started, and started again after the refusal.
    expect(events).toEqual(["start telegram", "stop telegram", "start telegram", "start telegram"]);
    expect(vault.substituteSecrets("{{secret:familiar.telegram-token}}", new URL(fake.apiRoot).origin, SHARED_OWNER)).toBe(fake.token);
  });

  it("at the next start fills in stored settings the environment leaves unset, and the environment wins", async () => {
    await setup().apply("telegram", { token: fake.token });
    expect(setup().effectiveConfig().TELEGRAM_BOT_TOKEN).toBe(fake.token);
    expect(setup().effectiveConfig().DISCORD_BOT_TOKEN).toBeUndefined();
    expect(setup({ TELEGRAM_BOT_TOKEN: "555:from-the-environment" }).effectiveConfig().TELEGRAM_BOT_TOKEN).toBe("555:from-the-environment");
  });
});
