/**
 * A mailbox's connection settings as a person types them (or an operator puts them in
 * `FAMILIAR_CONFIG`): the address, where IMAP and SMTP are, how they are encrypted, and the user
 * names. The app password is not part of them: it lives in the person's vault and is handed to the
 * connector only when it connects (see `EmailCredentials`).
 */
import { isIP } from "node:net";
import { z } from "zod";

/**
 * How a connection is encrypted: `implicit` — TLS from the first byte (IMAP 993, SMTP 465);
 * `starttls` — plain connect, then STARTTLS is required before login (IMAP 143, SMTP 587);
 * `none` — no encryption, accepted only for a server on this machine (loopback).
 */
export const TLS_MODES = ["implicit", "starttls", "none"] as const;
export type TlsMode = (typeof TLS_MODES)[number];

/** Whether `host` is this machine by its literal name or address (no DNS: a name could be repointed). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || /^(0{0,4}:){7}0{0,3}1$/.test(h) || /^::ffff:127\./.test(h);
  return false;
}

const hostSchema = z
  .string()
  .trim()
  .min(1, "a host name is needed")
  .max(253, "the host name is longer than 253 characters")
  .regex(/^[A-Za-z0-9.:[\]_-]+$/, "the host name has characters a host name cannot have");

/** One server endpoint (IMAP or SMTP). `ca`: PEM certificate(s) to trust besides the system's. */
export const endpointSchema = z.object({
  host: hostSchema,
  port: z.number().int().min(1).max(65535),
  tls: z.enum(TLS_MODES),
  user: z.string().min(1).max(320).optional(),
  ca: z.string().max(200_000).optional(),
});
export type EndpointSettings = z.infer<typeof endpointSchema>;

/** A mailbox's settings. `smtp.user` and `imap.user` default to the address. */
export const emailSettingsSchema = z
  .object({
    address: z.email().max(320),
    /** The name shown in From (optional). */
    name: z.string().max(200).optional(),
    imap: endpointSchema,
    smtp: endpointSchema,
    /**
     * The receiving server's `authserv-id`s (RFC 8601), e.g. `mx.google.com`: only the topmost
     * Authentication-Results header, and only when it carries one of these, counts when senders are
     * verified. Default: known for Gmail (imap.gmail.com → mx.google.com), else none (every sender
     * unverified until set).
     */
    authservIds: z.array(z.string().trim().min(1).max(253)).max(10).optional(),
    /** Mailboxes watched for new mail (default INBOX). */
    watch: z.array(z.string().min(1).max(500)).min(1).max(10).default(["INBOX"]),
  })
  .superRefine((value, ctx) => {
    for (const side of ["imap", "smtp"] as const) {
      if (value[side].tls === "none" && !isLoopbackHost(value[side].host))
        ctx.addIssue({ code: "custom", path: [side, "tls"], message: `${side.toUpperCase()} without encryption (tls "none") is accepted only for a server on this machine (localhost, 127.0.0.1, ::1), not ${value[side].host}` });
    }
  });
export type EmailSettings = z.infer<typeof emailSettingsSchema>;

/** The secret half of a mailbox: the app password, from the person's vault. Never logged or shown. */
export interface EmailCredentials {
  password: string;
}

/** Receiving servers whose Authentication-Results are known, by IMAP host. */
const KNOWN_AUTHSERV: Readonly<Record<string, readonly string[]>> = {
  "imap.gmail.com": ["mx.google.com"],
  "imap.googlemail.com": ["mx.google.com"],
};

/** The authserv-ids trusted for a mailbox: its settings, else the provider's known one, else none. */
export function trustedAuthservIds(settings: EmailSettings): readonly string[] {
  return settings.authservIds ?? KNOWN_AUTHSERV[settings.imap.host.toLowerCase()] ?? [];
}

/** The user name an endpoint logs in with. */
export function loginUser(settings: EmailSettings, side: "imap" | "smtp"): string {
  return settings[side].user ?? settings.imap.user ?? settings.address;
}
