/**
 * Mailbox operations against real Dovecot and Postfix: search, read, attachments, drafts, sending
 * (with our Message-ID pattern, threading and Auto-Submitted on automatic sends), the Sent copy,
 * move and flags; wrong passwords and stale refs end in words.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMailServers, settingsFor, testMail, type MailServers } from "../../helpers/mail/servers.js";
import { postfixUnavailable } from "../../helpers/mail/postfix.js";
import { until } from "../../helpers/e2e.js";
import { MailboxClient } from "../../../connectors/email/mailbox-client.js";
import { createParsePool } from "../../../connectors/email/parse-pool.js";
import { composeMail, replyReferences, replySubject } from "../../../connectors/email/compose.js";
import { sendComposed, testSmtp } from "../../../connectors/email/smtp.js";
import { emailSettingsSchema, isLoopbackHost } from "../../../connectors/email/settings.js";

const noPostfix = postfixUnavailable();

describe("mailbox settings", () => {
  it("accepts tls none only for a server on this machine", () => {
    const base = { address: "a@example.test", imap: { host: "127.0.0.1", port: 143, tls: "none" }, smtp: { host: "localhost", port: 25, tls: "none" } };
    expect(emailSettingsSchema.safeParse(base).success).toBe(true);
    const remote = emailSettingsSchema.safeParse({ ...base, imap: { host: "imap.example.com", port: 143, tls: "none" } });
    expect(remote.success).toBe(false);
    expect(JSON.stringify(remote.error?.issues)).toMatch(/only for a server on this machine/);
    for (const h of ["127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost", "x.localhost"]) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ["10.0.0.1", "imap.example.com", "localhost.example.com", "::2", "0.0.0.0"]) expect(isLoopbackHost(h)).toBe(false);
  });

  it("threads replies", () => {
    expect(replySubject("Tryouts")).toBe("Re: Tryouts");
    expect(replySubject("RE: Tryouts")).toBe("RE: Tryouts");
    expect(replyReferences({ messageId: "<b@x>", references: ["<a@x>"] })).toEqual(["<a@x>", "<b@x>"]);
  });
});

describe.skipIf(noPostfix !== null)(`mailbox operations${noPostfix ? ` (skipped: ${noPostfix})` : ""}`, () => {
  let servers: MailServers;
  let ana: MailboxClient;
  const parser = createParsePool();
  beforeAll(async () => {
    servers = await startMailServers();
    ana = new MailboxClient(settingsFor(servers, servers.accounts[0]), { password: servers.accounts[0].password }, { parser });
  }, 60_000);
  afterAll(async () => {
    await ana?.close();
    await parser.close();
    await servers?.close();
  });

  it("logs in, opens INBOX and authenticates to SMTP", async () => {
    await expect(ana.test()).resolves.toEqual({ messages: expect.any(Number) });
    const [a] = servers.accounts;
    await expect(testSmtp(settingsFor(servers, a), { password: a.password })).resolves.toBeUndefined();
    await expect(testSmtp(settingsFor(servers, a), { password: "nope" })).rejects.toThrow(/SMTP server at 127\.0\.0\.1:\d+ refused the user name or app password/);
    const bad = new MailboxClient(settingsFor(servers, a), { password: "nope" }, { parser });
    await expect(bad.test()).rejects.toMatchObject({ code: "auth_failed" });
  });

  it("connects with implicit TLS too, and says so in words when the encryption setting is wrong", async () => {
    const [a] = servers.accounts;
    const implicit = settingsFor(servers, a, { implicit: true });
    const client = new MailboxClient(implicit, { password: a.password }, { parser });
    await expect(client.test()).resolves.toEqual({ messages: expect.any(Number) });
    await client.close();
    await expect(testSmtp(implicit, { password: a.password })).resolves.toBeUndefined();
    const wrong = { ...settingsFor(servers, a), imap: { ...settingsFor(servers, a).imap, tls: "implicit" as const } };
    const bad = new MailboxClient(wrong, { password: a.password }, { parser });
    await expect(bad.test()).rejects.toMatchObject({ code: "tls_failed", message: expect.stringMatching(/encrypted connection to 127\.0\.0\.1:\d+ failed/) });
    const untrusted = { ...implicit, imap: { ...implicit.imap, ca: undefined } };
    await expect(new MailboxClient(untrusted, { password: a.password }, { parser }).test()).rejects.toMatchObject({ code: "tls_untrusted" });
  });

  it("searches by sender, recipient, subject, words, date range, unread and attachment, newest first, and reads one", async () => {
    const [a] = servers.accounts;
    await servers.deliver(a.address, testMail("School: tryouts on Friday", { from: "Coach <coach@school.test>", to: `${a.address}, grandma@family.test`, body: "Bring your boots to the field." }));
    await servers.deliver(a.address, testMail("Newsletter", { from: "news@shop.test" }));
    const withFile = testMail("Invoice", { from: "billing@shop.test" }).replace(
      "Content-Type: text/plain; charset=utf-8\r\n\r\nBody of Invoice\r\n",
      'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="invoice.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n--b--\r\n',
    );
    await servers.deliver(a.address, withFile);
    const bySender = await ana.searchUids({ from: "school.test" }, 10);
    expect(bySender.uids).toHaveLength(1);
    const [read] = await ana.fetch([{ path: "INBOX", uidValidity: bySender.uidValidity, uid: bySender.uids[0]! }]);
    expect(read?.parsed).toMatchObject({ ok: true, message: { subject: "School: tryouts on Friday", from: [{ address: "coach@school.test" }] } });
    expect((await ana.searchUids({ subject: "tryouts" }, 10)).uids).toEqual(bySender.uids);
    expect((await ana.searchUids({ to: "family.test" }, 10)).uids).toEqual(bySender.uids);
    expect((await ana.searchUids({ text: "boots to the field" }, 10)).uids).toEqual(bySender.uids);
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    expect((await ana.searchUids({ since: day(1) }, 10)).uids).toEqual([]);
    expect((await ana.searchUids({ before: day(-1) }, 10)).uids).toEqual([]);
    expect((await ana.searchUids({ since: day(-1), before: day(1), from: "school.test" }, 10)).uids).toEqual(bySender.uids);
    await ana.setFlags({ path: "INBOX", uidValidity: bySender.uidValidity, uid: bySender.uids[0]! }, ["\\Seen"], []);
    expect((await ana.searchUids({ unread: false }, 10)).uids).toEqual(bySender.uids);
    expect((await ana.searchUids({ unread: true, from: "school.test" }, 10)).uids).toEqual([]);
    const attached = await ana.searchUids({ hasAttachment: true }, 10);
    expect(attached.uids).toHaveLength(1);
    expect((await ana.searchUids({ hasAttachment: false }, 10)).uids).not.toContain(attached.uids[0]);
    const [inv] = await ana.fetch([{ path: "INBOX", uidValidity: attached.uidValidity, uid: attached.uids[0]! }]);
    expect(inv?.facts.hasAttachments).toBe(true);
    const part = inv?.parsed.ok ? inv.parsed.message.attachments[0]?.partId : null;
    expect(part).toBe("2");
    const bytes = await ana.attachment(inv!.ref, part!, 1024 * 1024);
    expect(bytes.toString("latin1")).toBe("%PDF-1.4\n");
    await expect(ana.attachment(inv!.ref, part!, 4)).rejects.toMatchObject({ code: "too_large" });
    const all = await ana.searchUids({}, 2);
    expect(all.uids[0]).toBeGreaterThan(all.uids[1]!);
    expect(await ana.fetch([{ path: "INBOX", uidValidity: "1", uid: all.uids[0]! }])).toEqual([]);
  });

  it("sends through Postfix: it arrives at ben with our Message-ID, threading, Auto-Submitted and no Bcc header; Sent and Drafts keep copies", async () => {
    const [a, b] = servers.accounts;
    const original = { messageId: "<orig-1@school.test>", references: ["<root@school.test>"] };
    const composed = await composeMail(
      { from: { name: "Ana", address: a.address }, to: [b.address], cc: [], bcc: ["hidden@example.test"], subject: replySubject("Tryouts"), text: "We will be there.", attachments: [{ filename: "note.txt", content: Buffer.from("hello") }], inReplyTo: original.messageId, references: replyReferences(original), automatic: true },
      { now: new Date(), messageId: "<familiar.test1@example.test>" },
    );
    expect(composed.messageId).toBe("<familiar.test1@example.test>");
    expect(composed.envelope.to.sort()).toEqual([b.address, "hidden@example.test"].sort());
    expect(composed.raw.toString()).not.toMatch(/^Bcc:/im);
    const receipt = await sendComposed(settingsFor(servers, a), { password: a.password }, composed);
    expect(receipt.accepted.sort()).toEqual([b.address, "hidden@example.test"].sort());
    await until(async () => (await servers.subjects(b)).includes("Re: Tryouts"), "delivery to ben");
    const benClient = new MailboxClient(settingsFor(servers, b), { password: b.password }, { parser });
    try {
      const found = await benClient.searchUids({ subject: "Re: Tryouts" }, 1);
      const [got] = await benClient.fetch([{ path: "INBOX", uidValidity: found.uidValidity, uid: found.uids[0]! }]);
      if (!got?.parsed.ok) throw new Error(`unreadable: ${JSON.stringify(found)} ${got ? JSON.stringify(got.parsed) : "not fetched"}`);
      const m = got.parsed.message;
      expect(m.messageId).toBe(composed.messageId);
      expect(m.inReplyTo).toBe("<orig-1@school.test>");
      expect(m.references).toEqual(["<root@school.test>", "<orig-1@school.test>"]);
      expect(m.headerLines.find((h) => h.key === "auto-submitted")?.line).toMatch(/auto-replied/);
      expect(m.headerLines.find((h) => h.key === "x-auto-response-suppress")?.line).toMatch(/All/);
      expect(m.attachments.map((x) => x.filename)).toEqual(["note.txt"]);
    } finally {
      await benClient.close();
    }
    const sent = await ana.specialFolder("\\Sent");
    expect(sent).toBe("Sent");
    expect(await ana.append(sent!, composed.raw, ["\\Seen"])).toMatchObject({ path: "Sent" });
    const draft = await composeMail({ from: { name: "", address: a.address }, to: [b.address], cc: [], bcc: ["hidden@example.test"], subject: "Draft", text: "later", attachments: [] }, { now: new Date(), messageId: "<familiar.test2@example.test>", keepBcc: true });
    expect(draft.raw.toString()).toMatch(/^Bcc: hidden@example\.test/im);
    const drafts = await ana.specialFolder("\\Drafts");
    await ana.append(drafts!, draft.raw, ["\\Draft"]);
    expect(await servers.subjects(a, "Drafts")).toEqual(["Draft"]);
  });

  it("moves and flags", async () => {
    const [a] = servers.accounts;
    await servers.deliver(a.address, testMail("to archive"));
    const hit = await ana.searchUids({ subject: "to archive" }, 1);
    const ref = { path: "INBOX", uidValidity: hit.uidValidity, uid: hit.uids[0]! };
    await ana.setFlags(ref, ["\\Flagged", "\\Seen"], []);
    const [flagged] = await ana.fetch([ref]);
    expect(flagged?.facts).toMatchObject({ flagged: true, seen: true });
    await ana.setFlags(ref, [], ["\\Seen"]);
    expect((await ana.searchUids({ subject: "to archive", unread: true }, 1)).uids).toEqual(hit.uids);
    await ana.move(ref, (await ana.specialFolder("\\Archive"))!);
    expect(await servers.subjects(a, "Archive")).toEqual(["to archive"]);
    await expect(ana.move(ref, "Archive")).rejects.toMatchObject({ code: "not_found" });
  });
});
