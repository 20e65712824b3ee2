/**
 * The real-server harness itself: Dovecot and Postfix start on loopback, accept STARTTLS with the
 * test certificate, authenticate, deliver between the two accounts, relay other domains to the
 * capture server, refuse unauthenticated relaying, and restart on the same ports with the same mail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import nodemailer from "nodemailer";
import { startMailServers, type MailServers } from "../../helpers/mail/servers.js";
import { postfixUnavailable } from "../../helpers/mail/postfix.js";
import { until } from "../../helpers/e2e.js";

const noPostfix = postfixUnavailable();

describe.skipIf(noPostfix !== null)(`mail servers on loopback${noPostfix ? ` (skipped: ${noPostfix})` : ""}`, () => {
  let servers: MailServers;
  beforeAll(async () => {
    servers = await startMailServers();
  }, 60_000);
  afterAll(async () => {
    await servers?.close();
  });

  const smtpFor = (account: { address: string; password: string }) =>
    nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtp!.port, secure: false, requireTLS: true, tls: { ca: servers.cert.certPem, servername: "localhost" }, auth: { user: account.address, pass: account.password }, logger: false });

  it("delivers by LMTP into an INBOX that IMAP over STARTTLS shows", async () => {
    const [ana] = servers.accounts;
    await servers.deliver(ana.address, "From: Carla <carla@outside.test>\r\nTo: ana@example.test\r\nSubject: lmtp hello\r\nMessage-ID: <lmtp-1@outside.test>\r\n\r\nHi Ana\r\n");
    expect(await servers.subjects(ana)).toContain("lmtp hello");
  });

  it("sends from one account to the other through Postfix submission", async () => {
    const [ana, ben] = servers.accounts;
    await smtpFor(ana).sendMail({ from: ana.address, to: ben.address, subject: "ana to ben", text: "hello" });
    await until(async () => (await servers.subjects(ben)).includes("ana to ben"), "delivery to ben");
    const got = await servers.subjects(ben);
    expect(got).toContain("ana to ben");
  });

  it("relays other domains to the capture server only for authenticated senders", async () => {
    const [ana] = servers.accounts;
    await smtpFor(ana).sendMail({ from: ana.address, to: "someone@elsewhere.test", subject: "outward", text: "x" });
    await until(() => servers.outside.find((m) => m.to.includes("someone@elsewhere.test")), "relay to the capture server");
    const anonymous = nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtp!.port, secure: false, requireTLS: true, tls: { ca: servers.cert.certPem, servername: "localhost" }, logger: false });
    await expect(anonymous.sendMail({ from: "x@outside.test", to: "victim@elsewhere.test", subject: "relay?", text: "x" })).rejects.toThrow(/Relay access denied|554|authentication/i);
    await expect(smtpFor({ address: ana.address, password: "wrong" }).verify()).rejects.toThrow(/auth/i);
  });

  it("restarts Dovecot on the same port with the same mail", async () => {
    const [ana] = servers.accounts;
    const before = await servers.subjects(ana);
    await servers.dovecot.kill();
    await servers.dovecot.start();
    expect(await servers.subjects(ana)).toEqual(before);
  });
});
