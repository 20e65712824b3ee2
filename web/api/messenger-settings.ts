/**
 * The messenger settings the setup page can enter: which messengers, what each body must look like
 * (the same rules as the environment variables), what still needs a restart, and the port the setup
 * API applies them through (`MessengerSettings`, implemented by the composition root's
 * `MessengerSetup`, app/messenger-setup.ts).
 */
import { z } from "zod";

/** The messengers whose settings the setup page can enter. */
export const pageMessengers = ["telegram", "slack", "discord", "whatsapp"] as const;
export type PageMessenger = (typeof pageMessengers)[number];

/** What the page sends per messenger (same rules as the environment variables). */
export const messengerBodies = {
  telegram: z.object({ token: z.string().trim().regex(/^\d+:[A-Za-z0-9_-]+$/, "Please paste the bot token from @BotFather (it looks like 123456:ABC-def…).") }).strict(),
  discord: z.object({ token: z.string().trim().min(20, "Please paste the Discord bot token (from the Developer Portal, Bot tab).") }).strict(),
  slack: z
    .object({
      botToken: z.string().trim().startsWith("xoxb-", "Please paste the Slack bot token; it starts with xoxb-."),
      appToken: z.string().trim().startsWith("xapp-", "Please paste the Slack app-level token; it starts with xapp-.").optional(),
      signingSecret: z.string().trim().min(8, "Please paste the Slack app's signing secret.").optional(),
    })
    .strict()
    .refine((s) => s.appToken !== undefined || s.signingSecret !== undefined, "give SLACK_APP_TOKEN (Socket Mode) or the signing secret (HTTP events)"),
  whatsapp: z.object({ enabled: z.literal(true) }).strict(),
} as const;

/** What cannot change without a restart, per messenger (the page says so). */
export const restartNotes: Record<PageMessenger, string> = {
  telegram: "Long polling starts at once; webhook mode (TELEGRAM_WEBHOOK_URL), ALLOW_FROM and ALLOW_GROUPS are environment settings and need a restart.",
  slack: "Socket Mode and HTTP events start at once; ALLOW_GROUPS needs a restart.",
  discord: "Starts at once; ALLOW_GROUPS needs a restart.",
  whatsapp: "Starts Chromium at once and shows the pairing QR here; ALLOW_GROUPS needs a restart.",
};

/** How the setup API reads and applies messenger settings (the composition root implements it). */
export interface MessengerSettings {
  /** Whether the environment configures `channel` (the page cannot change it then). */
  fromEnvironment(channel: PageMessenger): boolean;
  /**
   * Checks and applies settings for one messenger. Resolves with the new state ("running") or throws
   * a MessengerSetupError with what went wrong (the token check's answer); nothing is stored then.
   */
  apply(channel: PageMessenger, body: unknown): Promise<string>;
}

/** Settings the page could not apply; `status` is the HTTP status to answer with. */
export class MessengerSetupError extends Error {
  readonly code = "MESSENGER_SETUP" as const;
  constructor(
    message: string,
    readonly status: 400 | 409,
  ) {
    super(message);
    this.name = "MessengerSetupError";
  }
}
