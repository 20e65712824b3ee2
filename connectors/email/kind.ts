/**
 * The `email` connection kind: a mailbox reached over IMAP and SMTP. Capabilities, granted
 * separately: `read` (sync and new-mail watches, search, read, save attachments), `send` (drafts,
 * sends and replies — each still shown on a card to approve), `organise` (move, archive, flag). The
 * form is the one-time `/connect email` page; Test logs in to IMAP, opens INBOX and authenticates
 * to SMTP, and says in words what failed.
 */
import type { ConnectionForm, ConnectionKind, ConnectionTest } from "../../core/connections/index.js";
import type { ConnectionId } from "../../core/ids.js";
import type { Connection } from "../../core/connections/index.js";
import type { Json } from "../../core/json.js";
import { arrivalMatches, ARRIVED, observeArrival } from "./arrivals.js";
import { EmailError } from "./errors.js";
import { MailboxClient } from "./mailbox-client.js";
import type { MailParsePool } from "./parse-pool.js";
import { emailSettingsSchema } from "./settings.js";
import { testSmtp } from "./smtp.js";

const tlsOptions = [
  { value: "implicit", label: "TLS (ports 993 / 465)" },
  { value: "starttls", label: "STARTTLS (ports 143 / 587)" },
  { value: "none", label: "none — only for a server on this machine" },
];

/** The connection form: plain fields, mapped onto the settings. */
export const emailForm: ConnectionForm = {
  intro:
    "Use an app password, not your account password: Gmail (Google Account → Security → 2-Step Verification → App passwords; IMAP imap.gmail.com:993, SMTP smtp.gmail.com:465), Fastmail (Settings → Privacy & Security → App passwords; imap.fastmail.com:993, smtp.fastmail.com:465), iCloud (appleid.apple.com → Sign-In and Security → App-Specific Passwords; imap.mail.me.com:993, smtp.mail.me.com:587 STARTTLS), Outlook.com (account.microsoft.com → Security → App passwords, with two-step verification on; outlook.office365.com:993, smtp-mail.outlook.com:587 STARTTLS).",
  fields: [
    { name: "address", label: "Email address", type: "email", required: true },
    { name: "name", label: "Your name (shown as sender)", type: "text" },
    { name: "imap_host", label: "IMAP server", type: "text", required: true, hint: "e.g. imap.fastmail.com" },
    { name: "imap_port", label: "IMAP port", type: "number", required: true, value: "993" },
    { name: "imap_tls", label: "IMAP encryption", type: "select", options: tlsOptions, value: "implicit" },
    { name: "smtp_host", label: "SMTP server", type: "text", required: true, hint: "e.g. smtp.fastmail.com" },
    { name: "smtp_port", label: "SMTP port", type: "number", required: true, value: "465" },
    { name: "smtp_tls", label: "SMTP encryption", type: "select", options: tlsOptions, value: "implicit" },
    { name: "user", label: "User name (if not the address)", type: "text" },
    { name: "password", label: "App password", type: "password", required: true },
    { name: "ca", label: "CA certificate (PEM; only for a server with its own certificate)", type: "textarea" },
    { name: "authserv_ids", label: "Receiving server name(s) in Authentication-Results (comma-separated; Gmail's is known)", type: "text" },
  ],
  toSettings(v) {
    const user = v.user?.trim() || undefined;
    const ca = v.ca?.trim() || undefined;
    const ids = (v.authserv_ids ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    return {
      address: v.address?.trim() ?? "",
      ...(v.name?.trim() ? { name: v.name.trim() } : {}),
      imap: { host: v.imap_host?.trim() ?? "", port: Number(v.imap_port), tls: v.imap_tls ?? "implicit", ...(user && { user }), ...(ca && { ca }) },
      smtp: { host: v.smtp_host?.trim() ?? "", port: Number(v.smtp_port), tls: v.smtp_tls ?? "implicit", ...(user && { user }), ...(ca && { ca }) },
      ...(ids.length ? { authservIds: ids } : {}),
    };
  },
  toValues(settings): Record<string, string> {
    const parsed = emailSettingsSchema.safeParse(settings);
    if (!parsed.success) return {};
    const s = parsed.data;
    const user = s.imap.user && s.imap.user !== s.address ? s.imap.user : "";
    return {
      address: s.address,
      name: s.name ?? "",
      imap_host: s.imap.host,
      imap_port: String(s.imap.port),
      imap_tls: s.imap.tls,
      smtp_host: s.smtp.host,
      smtp_port: String(s.smtp.port),
      smtp_tls: s.smtp.tls,
      user,
      ca: s.imap.ca ?? s.smtp.ca ?? "",
      authserv_ids: (s.authservIds ?? []).join(", "),
    };
  },
};

/** Settings problems as sentences ("imap.port: …"). */
function settingsProblems(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => `${i.path.map(String).join(".") || "settings"}: ${i.message}`).join("; ");
}

/** Logs in to IMAP (INBOX opened) and to SMTP; each failure in words. Never throws. */
export async function testEmail(settingsJson: Json, password: string | null, parser: MailParsePool): Promise<ConnectionTest> {
  const parsed = emailSettingsSchema.safeParse(settingsJson);
  if (!parsed.success) return { ok: false, problems: [settingsProblems(parsed.error)] };
  if (!password) return { ok: false, problems: ["The app password is missing."] };
  const problems: string[] = [];
  const client = new MailboxClient(parsed.data, { password }, { parser });
  let summary = "";
  try {
    const { messages } = await client.test();
    summary = `IMAP: logged in, INBOX has ${messages} message${messages === 1 ? "" : "s"}.`;
  } catch (err) {
    problems.push(err instanceof EmailError ? err.message : "The IMAP server could not be reached.");
  } finally {
    await client.close();
  }
  try {
    await testSmtp(parsed.data, { password });
    summary += " SMTP: logged in.";
  } catch (err) {
    problems.push(err instanceof EmailError ? err.message : "The SMTP server could not be reached.");
  }
  return problems.length ? { ok: false, problems } : { ok: true, summary: summary.trim() };
}

/** The kind, wired to the parse workers and to what starts and stops a mailbox's sync. */
export function emailConnectionKind(deps: { parser: MailParsePool; changed: (id: ConnectionId, connection: Connection | null) => Promise<void> }): ConnectionKind {
  return {
    kind: "email",
    title: "Email (IMAP and SMTP)",
    capabilities: [
      { id: "read", label: "Read mail", allows: "Familiar syncs the mailbox, is told about new mail your watches match, and can search and read mail (one-time codes and sign-in links are removed first) and save attachments to your workspace." },
      { id: "send", label: "Send mail", allows: "Familiar can write drafts, send mail and reply — every message is shown to you on a card (From, To, Cc, Bcc, subject, the whole text, attachments) and goes out only when you approve it." },
      { id: "organise", label: "Organise mail", allows: "Familiar can move mail between folders, archive it and set flags (read, flagged, answered); it asks first unless you allowed it." },
    ],
    defaultCapabilities: ["read"],
    needsSecret: true,
    form: emailForm,
    parseSettings(input) {
      const parsed = emailSettingsSchema.safeParse(input);
      if (!parsed.success) throw new Error(`The mailbox settings are not usable: ${settingsProblems(parsed.error)}.`);
      return { settings: JSON.parse(JSON.stringify(parsed.data)) as Json, label: parsed.data.address.toLowerCase() };
    },
    test: (settings, secret) => testEmail(settings, secret, deps.parser),
    changed: deps.changed,
    changes: { changeKind: ARRIVED, matches: arrivalMatches, observe: observeArrival },
  };
}
