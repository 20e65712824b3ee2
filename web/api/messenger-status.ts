import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BotAccount } from "../../core/channels/index.js";

/** What each messenger needs and where the README explains it (anchors of README's headings). */
/** One messenger as the setup page shows it. */
export interface MessengerInfo {
  channel: "telegram" | "slack" | "discord" | "whatsapp";
  /** Environment variables it needs. */
  needs: string[];
  /** README anchor of its section. */
  readme: string;
  /** `running`, `not configured`, or the start-up error (e.g. the token check's answer). */
  state: string;
  /** Who Familiar is on that messenger while it runs (name, @handle, chat link), else null. */
  bot: BotAccount | null;
}

const needs: Omit<MessengerInfo, "state" | "bot">[] = [
  { channel: "telegram", needs: ["TELEGRAM_BOT_TOKEN"], readme: "/readme#telegram" },
  { channel: "slack", needs: ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET or SLACK_APP_TOKEN"], readme: "/readme#slack" },
  { channel: "discord", needs: ["DISCORD_BOT_TOKEN"], readme: "/readme#discord-dms" },
  { channel: "whatsapp", needs: ["WHATSAPP_ENABLED=true", "Chromium (CHROMIUM_PATH)"], readme: "/readme#whatsapp" },
];

/**
 * The messengers' state as the setup page and the Messengers tab show it: filled in by the
 * composition root from what `familiar.start()` reported (running, or the start-up error such as a
 * refused token), plus WhatsApp's pairing QR drawn as text while it pairs.
 */
export class MessengerStatus {
  private readonly states = new Map<string, string>();
  private whatsapp: (() => { state: string; qr: string | null }) | null = null;
  private accounts: (channel: MessengerInfo["channel"]) => BotAccount | null = () => null;

  /** Records what start-up reported. */
  started(result: { started: string[]; failed: { channel: string; error: string }[] }): void {
    for (const name of result.started) this.states.set(name, "running");
    for (const f of result.failed) this.states.set(f.channel, `failed to start: ${f.error}`);
  }

  /** Records a messenger's state after the setup page (re)started it. */
  set(channel: string, state: string): void {
    this.states.set(channel, state);
  }

  /** Where WhatsApp's pairing state and raw QR come from (when WhatsApp is enabled). */
  watchWhatsApp(source: () => { state: string; qr: string | null }): void {
    this.whatsapp = source;
  }

  /** Where the running messengers' own accounts come from (the running adapters' `account()`). */
  watchAccounts(source: (channel: MessengerInfo["channel"]) => BotAccount | null): void {
    this.accounts = source;
  }

  /** Every messenger with its needs, README link, state and (while it runs) Familiar's account there. */
  messengers = (): MessengerInfo[] =>
    needs.map((n) => {
      const state = this.states.get(n.channel) ?? "not configured";
      return { ...n, state, bot: state === "running" ? this.accounts(n.channel) : null };
    });

  /** Channels with a reported state (the local chat included). */
  channels = (): { channel: string; state: string }[] => [...this.states].map(([channel, state]) => ({ channel, state }));

  /** WhatsApp's state and its QR drawn with block characters, or null when WhatsApp is off. */
  whatsappQr = async (): Promise<{ state: string; qr: string | null } | null> => {
    const status = this.whatsapp?.();
    if (!status) return null;
    if (!status.qr) return { state: status.state, qr: null };
    const raw = status.qr;
    const { default: qrcode } = await import("qrcode-terminal");
    return { state: status.state, qr: await new Promise<string>((done) => qrcode.generate(raw, { small: true }, done)) };
  };
}

/** README.md of this install (next to package.json, from the sources or from `dist/`), or null. */
export function readReadme(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  // From the sources (web/api), the bundled server (dist/ or dist/chunks/) or an older compiled dist/web/api.
  const file = [resolve(here, "../../README.md"), resolve(here, "../README.md"), resolve(here, "../../../README.md")].find((f) => existsSync(f));
  return file ? readFileSync(file, "utf8") : null;
}
