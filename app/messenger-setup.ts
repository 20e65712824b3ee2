/**
 * Live reconfiguration of the messengers: settings entered on the setup page are kept in the
 * encrypted vault (tokens) and applied without a restart (see `MessengerSetup`). A composition
 * root of its own: it builds adapters with the same factory as the start (app/messengers.ts) and
 * installs them with the core.
 */
import { plainErrors, messengerBodies, MessengerSetupError, pageMessengers, type MessengerSettings, type PageMessenger } from "../web/api/index.js";
import type { ChannelAdapter, InboundSink } from "../core/channels/index.js";
import type { Config } from "../core/config/index.js";
import type { Logger } from "../core/log/index.js";
import { SHARED_OWNER, type SecretVault } from "../core/secrets/index.js";
import type { WhatsAppChannel } from "../bots/whatsapp/index.js";
import type { MessengerStatus } from "../web/api/index.js";

/** Vault names of the tokens entered on the page, and the config key each stands for. */
const secrets: Record<Exclude<PageMessenger, "whatsapp">, { name: string; key: "TELEGRAM_BOT_TOKEN" | "DISCORD_BOT_TOKEN" | "SLACK_BOT_TOKEN" | "SLACK_APP_TOKEN" | "SLACK_SIGNING_SECRET"; field: string }[]> = {
  telegram: [{ name: "familiar.telegram-token", key: "TELEGRAM_BOT_TOKEN", field: "token" }],
  discord: [{ name: "familiar.discord-token", key: "DISCORD_BOT_TOKEN", field: "token" }],
  slack: [
    { name: "familiar.slack-bot-token", key: "SLACK_BOT_TOKEN", field: "botToken" },
    { name: "familiar.slack-app-token", key: "SLACK_APP_TOKEN", field: "appToken" },
    { name: "familiar.slack-signing-secret", key: "SLACK_SIGNING_SECRET", field: "signingSecret" },
  ],
};

/** The settings that configure each messenger; set in the environment, they win over the page. */
const envKeys: Record<PageMessenger, (keyof Config)[]> = {
  telegram: ["TELEGRAM_BOT_TOKEN"],
  discord: ["DISCORD_BOT_TOKEN"],
  slack: ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"],
  whatsapp: ["WHATSAPP_ENABLED"],
};

/** Dependencies of {@link MessengerSetup}. */
export interface MessengerSetupDeps {
  config: Config;
  vault: SecretVault;
  logger: Logger;
  status: MessengerStatus;
  /** Builds the adapters of the messengers configured in a config (the composition root's factory). */
  create: (config: Config) => Promise<{ adapters: ChannelAdapter[]; whatsapp: WhatsAppChannel | null }>;
  /** Registers a started adapter with the core (wrapped for the chat log by the caller). */
  install: (adapter: ChannelAdapter) => ChannelAdapter;
  /** The running adapter of a channel, to stop it before its replacement starts. */
  running: (channel: PageMessenger) => ChannelAdapter | undefined;
  /** The core's inbound sink. */
  sink: InboundSink;
  /** Whether WhatsApp is enabled from the page (kept in the setup file). */
  whatsappEnabled: () => boolean;
  setWhatsAppEnabled: (enabled: boolean) => Promise<void>;
}

/**
 * Messenger settings entered on the setup page: kept in the encrypted vault (tokens) and applied
 * without a restart — the messenger's adapter is built, started (that is the token check: Telegram's
 * getMe, Slack's auth.test, Discord's login) and only then put in place of the old one. A refused
 * token changes nothing and is reported. At start, stored settings fill in what the environment
 * leaves unset; the environment always wins.
 */
export class MessengerSetup implements MessengerSettings {
  constructor(private readonly deps: MessengerSetupDeps) {}

  /** Which messengers the environment configures (the page cannot change those). */
  fromEnvironment(channel: PageMessenger): boolean {
    return envKeys[channel].some((key) => {
      const value = this.deps.config[key];
      return typeof value === "string" ? value.length > 0 : value === true;
    });
  }

  /** The config with stored page settings filled in where the environment has none. */
  effectiveConfig(): Config {
    let config = this.deps.config;
    for (const channel of pageMessengers) if (!this.fromEnvironment(channel)) config = { ...config, ...this.stored(channel) };
    return config;
  }

  /**
   * Checks and applies settings for one messenger. Resolves with the new state ("running") or throws
   * a MessengerSetupError with what went wrong (the token check's answer); nothing is stored then.
   */
  async apply(channel: PageMessenger, body: unknown): Promise<string> {
    if (this.fromEnvironment(channel)) throw new MessengerSetupError(`${channel} is configured by environment variables (${envKeys[channel].join(", ")}); they win over this page`, 409);
    const parsed = messengerBodies[channel].safeParse(body);
    if (!parsed.success) throw new MessengerSetupError(plainErrors(parsed.error), 400);
    const values: Record<string, string> = {};
    const data: Record<string, unknown> = { ...parsed.data };
    if (channel !== "whatsapp") {
      for (const s of secrets[channel]) {
        const v = data[s.field];
        if (typeof v === "string" && v) values[s.key] = v;
      }
    }
    const only = this.onlyMessenger(channel, channel === "whatsapp" ? { WHATSAPP_ENABLED: true } : values);
    const built = await this.deps.create(only);
    const adapter = built.adapters[0];
    if (!adapter) throw new MessengerSetupError(`${channel}: these settings configure nothing`, 400);
    const previous = this.deps.running(channel);
    if (previous) await previous.stop().catch((err: unknown) => this.deps.logger.warn({ err, channel }, "the old adapter did not stop cleanly"));
    const installed = this.deps.install(adapter);
    try {
      await installed.start(this.deps.sink);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.deps.status.set(channel, `failed to start: ${reason}`);
      if (previous) await previous.start(this.deps.sink).catch(() => undefined);
      throw new MessengerSetupError(`${channel} did not start: ${reason}`, 400);
    }
    if (channel === "whatsapp") {
      await this.deps.setWhatsAppEnabled(true);
      if (built.whatsapp) {
        const wa = built.whatsapp;
        this.deps.status.watchWhatsApp(() => ({ state: wa.state(), qr: wa.currentQr() }));
      }
    } else {
      for (const s of secrets[channel]) {
        const v = values[s.key];
        if (v) await this.deps.vault.set(SHARED_OWNER, s.name, v, [this.origin(channel)]);
        else await this.deps.vault.delete(SHARED_OWNER, s.name);
      }
    }
    this.deps.status.set(channel, "running");
    this.deps.logger.info({ channel }, "messenger set up on the setup page; running without a restart");
    return "running";
  }

  /** The config with only `channel` configured (the others cleared), for building its adapter alone. */
  private onlyMessenger(channel: PageMessenger, values: Partial<Config>): Config {
    const cleared: Partial<Config> = { TELEGRAM_BOT_TOKEN: undefined, TELEGRAM_WEBHOOK_URL: undefined, TELEGRAM_WEBHOOK_SECRET: undefined, SLACK_BOT_TOKEN: undefined, SLACK_APP_TOKEN: undefined, SLACK_SIGNING_SECRET: undefined, DISCORD_BOT_TOKEN: undefined, WHATSAPP_ENABLED: false };
    return { ...this.deps.config, ...cleared, ...values, ...(channel === "telegram" && { TELEGRAM_WEBHOOK_URL: undefined }) };
  }

  private stored(channel: PageMessenger): Partial<Config> {
    if (channel === "whatsapp") return this.deps.whatsappEnabled() ? { WHATSAPP_ENABLED: true } : {};
    const out: Partial<Config> = {};
    for (const s of secrets[channel]) {
      try {
        out[s.key] = this.deps.vault.substituteSecrets(`{{secret:${s.name}}}`, this.origin(channel), SHARED_OWNER);
      } catch {
        // not stored
      }
    }
    return out;
  }

  private origin(channel: Exclude<PageMessenger, "whatsapp">): string {
    const { config } = this.deps;
    const url = channel === "telegram" ? config.TELEGRAM_API_ROOT : channel === "discord" ? (config.DISCORD_API_URL ?? "https://discord.com") : (config.SLACK_API_URL ?? "https://slack.com");
    return new URL(url).origin;
  }
}
