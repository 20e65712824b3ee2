import { describe, expect, it } from "vitest";
import { filterMail, filterMailSource, MARKERS, MailReadError, type FilteredMail } from "../../../connectors/email/safety.js";
import { ADVERSARIAL_CODE, adversarialBodies } from "../../helpers/mail-adversarial.js";

/**
 * The mail-safety filter rule by rule: what must go (codes, passwords, access links, in every
 * shape and language the issue names) and what must stay (the hard cases). The corpus test
 * (corpus.test.ts) holds the figures; these pin each rule so a change that breaks one is named.
 */
const text = (subject: string, body: string): FilteredMail => filterMail({ subject, text: body });
const html = (subject: string, body: string): FilteredMail => filterMail({ subject, html: body });
const kinds = (r: FilteredMail) => r.removed.map((x) => x.kind);

describe("one-time codes are removed", () => {
  it.each([
    ["English", "Your code", "Your verification code is 482917. It expires in 10 minutes.", "482917", "verification-code"],
    ["German", "Anmeldung", "Ihr Anmeldecode lautet 482917.", "482917", "sign-in-code"],
    ["French", "Connexion", "Votre code de connexion : 482917", "482917", "sign-in-code"],
    ["Spanish", "Código", "Tu código de verificación es 482917.", "482917", "verification-code"],
    ["Portuguese", "Código", "Seu código de segurança é 482917.", "482917", "sign-in-code"],
    ["Chinese", "验证码", "您的验证码是482917，请勿泄露。", "482917", "verification-code"],
    ["Japanese", "認証", "認証コードは「482917」です。", "482917", "sign-in-code"],
  ])("in %s", (_lang, subject, body, code, kind) => {
    const r = text(subject, body);
    expect(r.text).not.toContain(code);
    expect(kinds(r)).toContain(kind);
    expect(r.text).toContain(MARKERS[kind as keyof typeof MARKERS]);
  });

  it.each([
    ["spaced", "Your login code: 4 8 2 9 1 7"],
    ["grouped", "Your login code: 482 917"],
    ["dashed", "Your login code: 482-917"],
    ["dotted", "Your login code: 482.917"],
    ["prefixed", "G-482917 is your verification code."],
    ["full-width", "ログインコード：４８２９１７"],
    ["one digit per line", "Your login code:\n4\n8\n2\n9\n1\n7"],
  ])("written %s", (_shape, body) => {
    const r = text("Sign in", body);
    expect(r.text.normalize("NFKC").replace(/[\s.-]/g, "")).not.toContain("482917");
  });

  it("in the digits of other scripts, mathematical digits and half-width katakana", () => {
    expect(text("Code", "Your verification code is ٤٨٢٩١٧").text).not.toContain("٤٨٢٩١٧");
    expect(text("Code", "Your verification code is 𝟒𝟖𝟐𝟗𝟏𝟕").text).not.toContain("𝟒𝟖𝟐𝟗𝟏𝟕");
    expect(text("ﾜﾝﾀｲﾑﾊﾟｽﾜｰﾄﾞ", "ﾜﾝﾀｲﾑﾊﾟｽﾜｰﾄﾞ: 318274").text).not.toContain("318274");
  });

  it("a bare number right after 'code', and keys and tokens that sign in on their own", () => {
    expect(text("Your Acme code", "Your Acme code: 640311").text).not.toContain("640311");
    const key = text("Your new API key", "Here is your API key: sk_live_9Xq2Lm7Rt4Vb8Nc1Zs6Wp3\nKeep it secret.");
    expect(key.text).not.toContain("9Xq2Lm7Rt4Vb8Nc1Zs6Wp3");
    expect(key.text).not.toContain("sk_live");
    expect(text("Descuento", "Tu código de descuento: 2025.").text).toContain("2025");
  });

  it("split across HTML tags, table cells and entities", () => {
    for (const body of [
      "<p>Your verification code:</p><p><b>48</b><i>29</i><span>17</span></p>",
      "<p>Your verification code:</p><table><tr><td>4</td><td>8</td><td>2</td><td>9</td><td>1</td><td>7</td></tr></table>",
      "<p>Your verification code: &#52;&#56;&#x32;&#57;&#49;&#55;</p>",
      "<p>Your verification code: 48&#8203;29&#8203;17</p>",
      "<p>Your verification code:<br>48<br>29<br>17</p>",
    ]) {
      const r = html("Verify", body);
      expect(r.text.replace(/\s/g, "")).not.toContain("482917");
      expect(r.removed.length).toBeGreaterThan(0);
    }
  });

  it("in the subject, and everywhere else the same code appears", () => {
    const r = text("731046 is your Picturely code", "Use 731046 to log in. Or open https://picturely.example/login?c=731046");
    expect(r.text).not.toContain("731046");
    expect(r.subject).toBe("[sign-in code removed] is your Picturely code");
  });

  it("letters and digits, letters only right after the word, and unknown formats after it", () => {
    expect(text("Threadloom", "Your confirmation code is KX7-Q2P").text).not.toContain("KX7");
    expect(text("Chatea", "Introduce este código para iniciar sesión: XQWPTK").text).not.toContain("XQWPTK");
    expect(text("2FA", "Your two-factor authentication code is ★ 7Q#4Z ★\nValid for 5 minutes.").text).not.toContain("7Q#4Z");
  });

  it("passwords whole, symbols included", () => {
    const r = text("Your account", "Username: ana\nTemporary password: Tq9!vR2x\nPassword: correcthorse");
    expect(r.text).not.toContain("Tq9");
    expect(r.text).not.toContain("!vR2x");
    expect(r.text).not.toContain("correcthorse");
    expect(r.text).toContain("Username: ana");
  });

  it("a list of backup codes", () => {
    const r = text("Recovery codes", "Your backup codes:\n  8391-2046\n  5527-9013\n  6648-3170");
    for (const code of ["8391", "5527", "6648"]) expect(r.text).not.toContain(code);
    expect(kinds(r)).toEqual(["recovery-code", "recovery-code", "recovery-code"]);
  });

  it("fails closed in an access mail: a code alone on its line is removed whatever labels it", () => {
    const r = text("Your Acme sign-in code", "Hello,\n\n    77 31 09\n\nThanks");
    expect(r.text).not.toContain("77 31 09");
    expect(r.accessMail).toBe(true);
  });

  it("the code of an OTP-Token header, wherever it stands", () => {
    const r = filterMail({ subject: "Hi", text: "Ticket 5531 — here is 5531", otpCode: "5531" });
    expect(r.text).not.toContain("5531");
  });
});

describe("access links are removed", () => {
  it("reset, magic sign-in, verification, device and recovery links by their URL", () => {
    const r = text(
      "Account",
      [
        "https://acme.example/password/reset?reset_token=7c1e9a2b4d6f8a0c2e4b6d8f",
        "https://acme.example/auth/magic?token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEifQ.Zx8Kq2mL9pR4sT7vW1yB",
        "https://acme.example/__/auth/action?mode=verifyEmail&oobCode=Qm9vZ2xlT29iQ29kZTEy",
        "https://acme.example/devices/approve?d=8a7b6c5d4e3f2a1b0c9d",
        "https://acme.example/recover/Zk82Lm19Qp47Rs30Tv65",
      ].join("\n"),
    );
    expect(kinds(r)).toEqual(["reset-link", "sign-in-link", "verification-link", "verification-link", "recovery-link"]);
    expect(r.text).not.toMatch(/https?:/);
  });

  it("behind click trackers whose target is in the URL (Safe Links, Google, base64, SES, Proofpoint)", () => {
    const target = "https://acme.example/reset?token=RT99a8b7c6d5e4f3a2b1c0";
    const b64 = Buffer.from(target).toString("base64url");
    for (const href of [
      `https://eur01.safelinks.protection.outlook.com/?url=${encodeURIComponent(target)}&data=05`,
      `https://www.google.com/url?q=${encodeURIComponent(encodeURIComponent(target))}&sa=D`,
      `https://links.shop.example/r?u=${b64}`,
      `https://x.r.us-east-1.awstrack.me/L0/${encodeURIComponent(target)}/1/010001`,
      `https://urldefense.proofpoint.com/v2/url?u=https-3A__acme.example_reset-3Ftoken-3DRT99a8b7c6d5e4f3a2b1c0&d=DwMF`,
    ]) {
      const r = html("Hello", `<p><a href="${href}">Open</a></p>`);
      expect(r.text, href).not.toContain("RT99a8b7c6d5e4f3a2b1c0");
      expect(kinds(r), href).toEqual(["reset-link"]);
    }
  });

  it("a short magic-link token in the path when the anchor says sign in", () => {
    expect(kinds(html("Slate", `<a href="https://slate.example/l/8f3a9c2e1b7d">Log in to Slate</a>`))).toEqual(["sign-in-link"]);
    expect(html("Forum", `<a href="https://forum.example/t/sourdough/18273">Log in to reply</a>`).removed).toEqual([]);
  });

  it("an opaque tracker by its anchor text, or by the text around a 'click here'", () => {
    const tracker = "https://click.mailer.example/ls/click?upn=aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z";
    expect(kinds(html("Hi", `<a href="${tracker}">Reset password</a>`))).toEqual(["reset-link"]);
    expect(kinds(html("Hi", `<p>To sign in to your account, <a href="${tracker}">click here</a>.</p>`))).toEqual(["sign-in-link"]);
    expect(kinds(html("Hi", `<a href="${tracker}">Passwort zurücksetzen</a>`))).toEqual(["reset-link"]);
    expect(kinds(html("Hi", `<a href="${tracker}">パスワードを再設定する</a>`))).toEqual(["reset-link"]);
    expect(kinds(html("Hi", `<a href="${tracker}">重置密码</a>`))).toEqual(["reset-link"]);
    const shown = html("Hi", `<a href="${tracker}">Reset password</a>`).text;
    expect(shown).toBe("Hi\n\nReset password [password-reset link removed]");
  });

  it("a URL shown as its own anchor text goes whole; a plain-text URL hard-wrapped over two lines goes whole", () => {
    const long = "https://acme.example/account/reset-password?token=4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e";
    expect(html("Reset", `<a href="${long}">${long}</a>`).text).toBe("Reset\n\n[password-reset link removed]");
    const wrapped = text("Reset your password", `Open:\nhttps://acme.example/account/reset-password?token=4f6a8c0e2b4d6f8a0c\n2e4b6d8f0a2c4e&uid=77213\nThanks`);
    expect(wrapped.text).not.toContain("2e4b6d8f0a2c4e");
  });
});

describe("harmless look-alikes pass untouched", () => {
  it.each([
    ["order number", "Order number: 112-4829173-2039481. Total: $38.97", ["112-4829173-2039481", "$38.97"]],
    ["order, tight", "Order 4829173 has shipped. Sign in to track it.", ["4829173"]],
    ["tracking number", "Tracking number: 1Z999AA10123456784", ["1Z999AA10123456784"]],
    ["invoice", "Rechnungsnummer: 2025-118830, Betrag 64,20 EUR", ["2025-118830", "64,20 EUR"]],
    ["phone", "Call 0800 123 4567 or +49 30 12345678, or (555) 010-2388", ["0800 123 4567", "+49 30 12345678", "(555) 010-2388"]],
    ["dates and times", "Due 2025-03-20 at 10:30, or 12/05/2025", ["2025-03-20", "10:30", "12/05/2025"]],
    ["prices", "Total 1.234,56 € or ¥268.00 or R$ 149,90", ["1.234,56 €", "¥268.00", "R$ 149,90"]],
    ["promo code", "Use promo code SPRING20 for 20% off. Log in to redeem.", ["SPRING20"]],
    ["booking reference", "Booking reference: K7F9QX. Confirmation number 2291048837.", ["K7F9QX", "2291048837"]],
    ["door code", "The door code for the building is 4719#.", ["4719#"]],
    ["auth code on a receipt", "Auth code: 0Q72KD\nCard: Visa •••• 1881", ["0Q72KD", "1881"]],
  ])("%s", (_case, body, keep) => {
    const r = text("Your order", body);
    for (const k of keep) expect(r.text).toContain(k);
    expect(r.removed).toEqual([]);
  });

  it("meeting IDs, passcodes and join links of invites", () => {
    const r = text(
      "Invitation: Design review",
      "Join Zoom Meeting\nhttps://zoom.us/j/84529173301?pwd=bXlQd0VqS2xTdk9ZcG1hR3Rqd1V2dz09\n\nMeeting ID: 845 2917 3301\nPasscode: 482917\nDial-in PIN: 7741#",
    );
    expect(r.removed).toEqual([]);
    for (const k of ["845 2917 3301", "482917", "7741#", "pwd=bXlQ"]) expect(r.text).toContain(k);
  });

  it("a payment's authorisation code that warns is a code; a receipt's auth code is not", () => {
    expect(text("Payment", "Your authorisation code for the payment of EUR 49.00 is 482917. Do not share it.").text).not.toContain("482917");
    expect(text("Your receipt", "Transaction ID: 20250302-118842\nAuth code: 0Q72KD").text).toContain("0Q72KD");
  });

  it("a Zoom sign-in code is still a code", () => {
    expect(text("Zoom", "Your Zoom verification code is 482917").text).not.toContain("482917");
  });

  it("newsletter links, unsubscribe links, plain login pages and appointment confirmations", () => {
    const r = html(
      "News",
      `<p><a href="https://news.example/ct/Rq1Ww2Ee3Rr4Tt5Yy6Uu7Ii8">Read the recipe</a></p>` +
        `<p><a href="https://news.example/ct/Zx1Cv2Bn3Mm4Nb5Vc6Xz7Lk8">Unsubscribe</a></p>` +
        `<p><a href="https://shop.example/login">Log in</a></p>` +
        `<p><a href="https://dentist.example/appointments/confirm?a=30918&amp;k=Mx7Nc6Bv5Vx4Cz3Za2">Confirm appointment</a></p>`,
    );
    expect(r.removed).toEqual([]);
    expect(r.text).toContain("Read the recipe [https://news.example/ct/Rq1Ww2Ee3Rr4Tt5Yy6Uu7Ii8]");
    expect(r.text).toContain("Log in [https://shop.example/login]");
    expect(r.text).toContain("k=Mx7Nc6Bv5Vx4Cz3Za2");
  });

  it("'never share your verification code' in a newsletter removes nothing", () => {
    expect(text("Stay safe", "We will never ask for your verification code, password or PIN. Call 0800 555 0142.").removed).toEqual([]);
  });
});

describe("the output", () => {
  it("is subject, blank line, body; markers hold no digits; filtering twice changes nothing", () => {
    const once = text("Your code 482917", "Your verification code is 482917.\nOrder 7731920.");
    expect(once.text).toBe(`${once.subject}\n\n${once.body}`);
    for (const m of Object.values(MARKERS)) expect(m).not.toMatch(/\d/);
    const twice = text(once.subject, once.body);
    expect(twice.text).toBe(once.text);
  });

  it("prefers the HTML part, shows link targets and image alt text, never image sources", () => {
    const r = filterMail({ subject: "S", text: "plain version", html: `<p>Hello <a href="https://a.example/x">there</a><img src="https://t.example/pixel.gif" alt="Logo"></p>` });
    expect(r.body).toBe("Hello there [https://a.example/x]Logo");
  });

  it("strips invisible characters and cannot be fooled by private-use marks in the mail", () => {
    const r = html("Verify", "<p>Your verification code: 48\u200b29\u200b17 &#xE000;&#57345;\uE002</p>");
    expect(r.text).toBe("Verify\n\nYour verification code: [verification code removed]");
  });
});

describe("raw messages", () => {
  it("quoted-printable and base64 parts, encoded-word subjects", async () => {
    const qp = "Subject: =?UTF-8?Q?Ihr_Best=C3=A4tigungscode?=\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nIhr Best=C3=A4tigungscode lautet: 71=\r\n5309\r\n";
    const r1 = await filterMailSource(qp);
    expect(r1.text).toBe("Ihr Bestätigungscode\n\nIhr Bestätigungscode lautet: [verification code removed]\n");
    const b64 = `Subject: Code\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from("<p>Your sign-in code: <b>905512</b></p>").toString("base64")}\r\n`;
    expect((await filterMailSource(b64)).text).not.toContain("905512");
  });

  it("refuses a message over the cap with a clear error, and reads broken MIME without dying", async () => {
    await expect(filterMailSource("x".repeat(200), { maxBytes: 100 })).rejects.toMatchObject({ name: "MailReadError", code: "MAIL_TOO_LARGE" });
    expect(MailReadError).toBeTypeOf("function");
    const broken = 'Content-Type: multipart/mixed; boundary="b"\r\nSubject: Broken\r\n\r\n--b\r\nContent-Type: text/plain; charset=x-unknown\r\n\r\nYour verification code is 482917\r\n--b';
    const r = await filterMailSource(broken);
    expect(r.text).not.toContain("482917");
  });
});

describe("adversarial bodies of ~5 MB (timed in the bench, not here)", () => {
  it.each(adversarialBodies().map((b) => [b.name, b] as const))("%s completes and still removes the code", (_name, body) => {
    const r = filterMail({ subject: "Adversarial", text: body.text ?? null, html: body.html ?? null });
    expect(r.text).not.toContain(ADVERSARIAL_CODE);
    expect(r.text.startsWith("Adversarial\n\n")).toBe(true);
  }, 120_000);
});
