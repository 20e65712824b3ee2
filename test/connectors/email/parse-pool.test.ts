/**
 * Parsing off the event loop, with caps: ordinary mail parses; a 10,000-part message, a 50 MB message,
 * broken MIME, an unknown charset and deep nesting each get "could not read this message" or a best
 * effort — never a thrown error, a hung parse or a dead process — and the pool keeps working after.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createParsePool } from "../../../connectors/email/parse-pool.js";

const pool = createParsePool({ workers: 1 });
afterAll(() => pool.close());

const eml = (headers: string, body: string) => Buffer.from(`${headers.trim().replace(/\n/g, "\r\n")}\r\n\r\n${body.replace(/\n/g, "\r\n")}`);

describe("mail parse pool", () => {
  it("hands out only the filtered subject and body: a sign-in code, a reset link and a magic link are gone", async () => {
    const raw = eml(
      `From: Shop <no-reply@shop.example>
To: ana@example.test
Subject: Your sign-in code 482917
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8`,
      `<p>Your sign-in code is <b>482917</b>.</p><p><a href="https://shop.example/reset?token=Zx81kQ">Reset your password</a></p><p><a href="https://shop.example/magic?t=9f8e7d">Sign in with this link</a></p><p>Your order 4829173 has shipped.</p>`,
    );
    const out = await pool.parse(raw);
    if (!out.ok) throw new Error(out.reason);
    const seen = out.message.filtered.text;
    expect(seen).not.toMatch(/482917\b|Zx81kQ|9f8e7d/);
    expect(out.message.filtered.removed.map((r) => r.kind)).toEqual(expect.arrayContaining(["sign-in-code", "reset-link", "sign-in-link"]));
    expect(JSON.stringify(out.message)).not.toMatch(/Zx81kQ|9f8e7d/);
    const plain = await pool.parse(eml(`From: Shop <orders@shop.example>\nTo: ana@example.test\nSubject: Shipped`, "Your order 4829173 has shipped. Tracking 1Z999AA10123456784."));
    if (!plain.ok) throw new Error(plain.reason);
    expect(plain.message.filtered.text).toContain("4829173");
    expect(plain.message.filtered.removed).toEqual([]);
  });

  it("parses headers, addresses, text from HTML and attachments", async () => {
    const raw = eml(
      `From: "Ana Ruiz" <Ana@Example.test>
To: ben@example.test, Team: carla@example.test, dan@example.test;
Subject: =?UTF-8?B?w5xiZXIgZGllIFJlaXNl?=
Date: Mon, 2 Jun 2025 10:00:00 +0200
Message-ID: <m1@example.test>
List-Id: School news <news.school.example>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"`,
      `--b1
Content-Type: text/html; charset=utf-8

<p>Order <b>4711</b> shipped.</p>
--b1
Content-Type: application/pdf; name="invoice.pdf"
Content-Disposition: attachment; filename="invoice.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQK
--b1--
`,
    );
    const out = await pool.parse(raw);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const m = out.message;
    expect(m.subject).toBe("Über die Reise");
    expect(m.filtered.subject).toBe("Über die Reise");
    expect(m.text).toBe("");
    expect(m.from).toEqual([{ name: "Ana Ruiz", address: "ana@example.test" }]);
    expect(m.to.map((a) => a.address)).toEqual(["ben@example.test", "carla@example.test", "dan@example.test"]);
    expect(m.messageId).toBe("<m1@example.test>");
    expect(m.listId).toBe("news.school.example");
    expect(m.date).toBe("2025-06-02T08:00:00.000Z");
    expect(m.filtered.body).toMatch(/Order 4711 shipped/i);
    expect(m.attachments).toEqual([expect.objectContaining({ filename: "invoice.pdf", contentType: "application/pdf", size: 9, partId: "2" })]);
    expect(m.headerLines[0]).toEqual({ key: "from", line: 'From: "Ana Ruiz" <Ana@Example.test>' });
  });

  it("reads only the header section when asked", async () => {
    const out = await pool.parse(Buffer.from("From: a@x.test\r\nSubject: hi\r\n\r\n"), { headersOnly: true });
    expect(out).toMatchObject({ ok: true, message: { subject: "hi", headersOnly: true } });
  });

  it("refuses a 10,000-part message in words", async () => {
    const parts = Array.from({ length: 10_000 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join("");
    const out = await pool.parse(eml(`From: a@x.test\nSubject: many\nContent-Type: multipart/mixed; boundary="b"`, parts + "--b--\r\n"));
    expect(out).toEqual({ ok: false, reason: expect.stringMatching(/^could not read this message: /) });
  });

  it("refuses a 50 MB message before parsing it", async () => {
    const out = await pool.parse(Buffer.alloc(50 * 1024 * 1024, 0x61));
    expect(out).toEqual({ ok: false, reason: expect.stringMatching(/could not read this message: it is 50\.0 MB, more than the 25 MB/) });
  });

  it("survives broken MIME, unknown charsets and deep nesting, and keeps working", async () => {
    const broken = await pool.parse(eml(`From: a@x.test\nSubject: broken\nContent-Type: multipart/mixed; boundary="never"`, "no boundary here\n=?x?q?zz\n"));
    expect(broken.ok).toBe(true);
    const charset = await pool.parse(eml(`From: a@x.test\nSubject: =?x-unknown-9?Q?abc?=\nContent-Type: text/plain; charset=x-unknown-9`, "hello"));
    expect(charset.ok).toBe(true);
    if (charset.ok) expect(charset.message.filtered.body).toContain("hello");
    let nested = "";
    for (let i = 0; i < 3_000; i++) nested += `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`;
    const deep = await pool.parse(Buffer.from(`From: a@x.test\r\nSubject: deep\r\n${nested}Content-Type: text/plain\r\n\r\nbottom\r\n`));
    expect(typeof deep.ok).toBe("boolean");
    if (!deep.ok) expect(deep.reason).toMatch(/^could not read this message: /);
    const after = await pool.parse(eml(`From: a@x.test\nSubject: still fine`, "ok"));
    expect(after).toMatchObject({ ok: true, message: { subject: "still fine" } });
  });

  it("ends a parse that takes too long and reads the next message", async () => {
    // 250 ms against a parse of several seconds on an idle machine (9.6 M characters of HTML turned
    // into text, the cap raised for it); the clock starts when the parse does, not with the worker.
    const slow = createParsePool({ limits: { timeoutMs: 250, maxHtmlToText: 20_000_000 } });
    try {
      const html = '<p>x <b>y</b> <a href="http://a.test/">z</a></p>'.repeat(200_000);
      const out = await slow.parse(eml(`From: a@x.test\nSubject: slow\nContent-Type: text/html`, html));
      expect(out).toEqual({ ok: false, reason: "could not read this message: reading it took longer than 0 s" });
      const next = await slow.parse(eml(`From: a@x.test\nSubject: quick`, "ok"));
      expect(next.ok).toBe(true);
    } finally {
      await slow.close();
    }
  });
});
