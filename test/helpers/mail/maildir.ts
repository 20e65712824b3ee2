/**
 * Fills a test account's Maildir directly (for the bench's 10,000-message mailbox and the crash
 * tests' bursts: delivering that many by LMTP would take minutes). Each file is written in tmp/ and
 * renamed into new/, as a delivery agent does, so a running Dovecot never sees half a message; it
 * indexes them on its next look at the folder (IDLE notices them). Files are owned by Dovecot's user.
 */
import { chown, mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Dovecot, TestAccount } from "./dovecot.js";
import { dovecotIdentity } from "./dovecot.js";

/** A varied message: plain text, HTML with links, an attachment, a sign-in code, a list mail. */
export function sampleMessage(i: number, at: Date): string {
  const kind = i % 5;
  const id = `<bench-${i}-${at.getTime()}@outside.test>`;
  const head = [`From: Sender ${i % 97} <sender${i % 97}@shop${i % 13}.test>`, "To: ana@example.test", `Date: ${at.toUTCString()}`, `Message-ID: ${id}`, "MIME-Version: 1.0"];
  const words = `Order ${100000 + i} was shipped on ${at.toDateString()}. Tracking 1Z999AA1${String(i).padStart(8, "0")}. Thank you for shopping with us; reply if anything is wrong.`;
  switch (kind) {
    case 0:
      return [...head, `Subject: Your order ${100000 + i}`, "Content-Type: text/plain; charset=utf-8", "", words.repeat(3), ""].join("\r\n");
    case 1:
      return [...head, `Subject: Newsletter week ${i}`, "List-Id: News <news.shop.test>", "Content-Type: text/html; charset=utf-8", "", `<html><body>${`<p>${words} <a href="https://shop.test/p/${i}?utm=x">See more</a></p>`.repeat(8)}</body></html>`, ""].join("\r\n");
    case 2:
      return [...head, `Subject: Your sign-in code`, "Content-Type: text/plain; charset=utf-8", "", `Your sign-in code is ${String(100000 + ((i * 7919) % 900000))}. It expires in 10 minutes.`, ""].join("\r\n");
    case 3:
      return [...head, `Subject: Invoice ${i}`, 'Content-Type: multipart/mixed; boundary="b"', "", "--b", "Content-Type: text/plain", "", words, "--b", "Content-Type: application/pdf", 'Content-Disposition: attachment; filename="invoice.pdf"', "Content-Transfer-Encoding: base64", "", Buffer.alloc(3000, i % 256).toString("base64").replace(/.{76}/g, "$&\r\n"), "--b--", ""].join("\r\n");
    default:
      return [...head, `Subject: Re: question ${i}`, `In-Reply-To: <q-${i}@example.test>`, "Content-Type: text/plain; charset=utf-8", "", `> earlier\r\n${words}`, ""].join("\r\n");
  }
}

/** Writes `count` messages (`make(i, date)`, default {@link sampleMessage}) into `account`'s INBOX, dated one minute apart ending now. */
export async function fillMaildir(dovecot: Dovecot, account: TestAccount, count: number, first = 0, make: (i: number, at: Date) => string = sampleMessage): Promise<void> {
  const base = join(dovecot.options.dir, "mail", account.address);
  const who = dovecotIdentity();
  for (const sub of ["", "new", "cur", "tmp"]) {
    await mkdir(join(base, sub), { recursive: true });
    if (who.drop) await chown(join(base, sub), who.uid, who.gid);
  }
  const now = Date.now();
  for (let i = first; i < first + count; i++) {
    const at = new Date(now - (first + count - i) * 60_000);
    const name = `${Math.floor(at.getTime() / 1000)}.M${i}P${process.pid}.bench`;
    await writeFile(join(base, "tmp", name), make(i, at));
    if (who.drop) await chown(join(base, "tmp", name), who.uid, who.gid);
    await rename(join(base, "tmp", name), join(base, "new", name));
  }
}
