/**
 * Probes, written after the rules to attack them from outside, both directions: access mails in
 * shapes the corpus does not have (a bare "code:" with nothing else around it, API keys, short
 * magic-link tokens in the path, quoted replies, decoy spans, codes in image alt text, "#" before
 * a code), and harmless mails built to trip them (promo codes at sign-up, case numbers, phone
 * numbers in odd spacing, airline confirmation codes, codes of conduct, RSVP links).
 */
import type { MailSpec } from "./compose.js";

const access: MailSpec[] = [
  {
    id: "p-bare-code-colon",
    from: "Acme <hello@acme.example>",
    subject: "Your Acme code",
    text: "Your Acme code: 640311",
    expect: { access: true, secrets: ["640311"] },
  },
  {
    id: "p-heading-then-code",
    from: "Nordlicht <app@nordlicht.example>",
    subject: "Nordlicht",
    html: `<h3>Your code</h3><p style="font-size:30px">918 204</p>`,
    expect: { access: true, secrets: ["918204"] },
  },
  {
    id: "p-api-key",
    from: "Devcloud <keys@devcloud.example>",
    subject: "Your new API key",
    text: "Here is your API key: dk_live_9Xq2Lm7Rt4Vb8Nc1Zs6Wp3\nKeep it secret.",
    expect: { access: true, secrets: ["dk_live_9Xq2Lm7Rt4Vb8Nc1Zs6Wp3", "9Xq2Lm7Rt4Vb8Nc1Zs6Wp3"] },
  },
  {
    id: "p-personal-access-token",
    from: "Forgebase <noreply@forgebase.example>",
    subject: "A new personal access token was created",
    text: "Token: fbp_8kQ2mZ7xR4tL9vN3cB6yW1pD5sF0hJ2a\nScopes: repo, read:org",
    expect: { access: true, secrets: ["fbp_8kQ2mZ7xR4tL9vN3cB6yW1pD5sF0hJ2a", "8kQ2mZ7xR4tL9vN3cB6yW1pD5sF0hJ2a"] },
  },
  {
    id: "p-short-path-magic-link",
    from: "Slate <login@slate.example>",
    subject: "Log in to Slate",
    html: `<p><a href="https://slate.example/l/8f3a9c2e1b7d">Log in to Slate</a></p>`,
    expect: { access: true, secrets: ["8f3a9c2e1b7d"] },
  },
  {
    id: "p-quoted-reply",
    from: "Ana Lima <ana.lima@work.example>",
    subject: "Fwd: Your verification code",
    text: "Can you check this?\n\n> From: Nimbus <no-reply@nimbuscloud.example>\n> Your verification code is 227405.\n> It expires in 10 minutes.",
    expect: { access: true, secrets: ["227405"] },
  },
  {
    id: "p-decoy-hidden-digits",
    from: "Ledgerly <accounts@ledgerly.example>",
    subject: "Sign-in code",
    html: `<p>Your sign-in code is <b>63<span style="display:none">00</span>81<span style="font-size:0">x</span>47</b></p>`,
    expect: { access: true, secrets: ["638147", "63008147"] },
  },
  {
    id: "p-code-in-alt",
    from: "Picturely <security@picturely.example>",
    subject: "Your code",
    html: `<p>Enter this code to sign in:</p><p><img src="https://picturely.example/code.png" alt="771 204"></p>`,
    expect: { access: true, secrets: ["771204"] },
  },
  {
    id: "p-hash-code",
    from: "Ridewell <codes@ridewell.example>",
    subject: "Ridewell login",
    text: "Your login code: #550192",
    expect: { access: true, secrets: ["550192"] },
  },
  {
    id: "p-reply-with-code",
    from: "Mobi Banco <app@mobibanco.example>",
    subject: "Confirm the transfer",
    text: "To confirm the transfer of 300.00 EUR, reply with code 804412.",
    expect: { access: true, secrets: ["804412"], keep: ["300.00 EUR"] },
  },
  {
    id: "p-reset-token-text",
    from: "Harbor Health Portal <noreply@harborhealth.example>",
    subject: "Password help",
    text: "If the link does not work, enter this reset token on the website: 7d2f9a4c1e8b3d6f0a5c",
    expect: { access: true, secrets: ["7d2f9a4c1e8b3d6f0a5c"] },
  },
  {
    id: "p-magic-link-www-no-scheme",
    from: "Draftly <login@draftly.example>",
    subject: "Your sign-in link",
    text: "Sign in here: www.draftly.example/auth/magic?token=Lq8Wz3Xc7Vb2Nm6Kj1Hg",
    expect: { access: true, secrets: ["Lq8Wz3Xc7Vb2Nm6Kj1Hg"] },
  },
  {
    id: "p-ja-code-halfwidth-kana",
    from: "ミライ証券 <info@mirai-sec.example>",
    subject: "ﾜﾝﾀｲﾑﾊﾟｽﾜｰﾄﾞ",
    text: "ﾜﾝﾀｲﾑﾊﾟｽﾜｰﾄﾞ: 318274",
    expect: { access: true, secrets: ["318274"] },
  },
  {
    id: "p-de-code-sms-style",
    from: "Fahrradwerk <app@fahrradwerk.example>",
    subject: "Code",
    text: "Dein Code für die Anmeldung: 702 519. Gib ihn nicht weiter.",
    expect: { access: true, secrets: ["702519"] },
  },
];

const harmless: MailSpec[] = [
  {
    id: "p-h-promo-at-signup",
    from: "Gladstone Books <offers@gladstonebooks.example>",
    subject: "Welcome!",
    text: "Use code WELCOME10 at sign up for 10% off your first order.",
    expect: { access: false, keep: ["WELCOME10"] },
  },
  {
    id: "p-h-case-number",
    from: "City Support <support@city-office.example>",
    subject: "Case #482917 updated",
    text: "Your case #482917 was updated. Reference: 5520-1187.",
    expect: { access: false, keep: ["#482917", "5520-1187"] },
  },
  {
    id: "p-h-airline-confirmation-code",
    from: "SkyLark Airways <bookings@skylark.example>",
    subject: "Your trip to Berlin",
    text: "Your flight confirmation code is QX7P2K. Flight SL 2471 departs at 07:25.",
    expect: { access: false, keep: ["QX7P2K"] },
  },
  {
    id: "p-h-phone-odd-spacing",
    from: "Riverside Elementary <office@riverside-sd.example>",
    subject: "Call us",
    text: "Office: 555 010 2388. Nurse: 555-010-2390. Fax 555.010.2391.",
    expect: { access: false, keep: ["555 010 2388", "555-010-2390", "555.010.2391"] },
  },
  {
    id: "p-h-code-of-conduct",
    from: "Northside FC <coach@northsidefc.example>",
    subject: "Code of conduct",
    text: "Please read the code of conduct (version 2025.1) before the match on 12 April. Kickoff 10:30, pitch 4.",
    expect: { access: false, keep: ["2025.1", "10:30"] },
  },
  {
    id: "p-h-rsvp-links",
    from: "Office Calendar <calendar@office-cal.example>",
    subject: "Invitation: Lunch",
    html: `<p>Lunch, Friday 12:30</p><p><a href="https://calendar.example/rsvp?eid=Tm9vbkx1bmNoMjAyNQ&amp;tok=Xk29Lq83Mz71&amp;r=yes">Yes</a> <a href="https://calendar.example/rsvp?eid=Tm9vbkx1bmNoMjAyNQ&amp;tok=Xk29Lq83Mz71&amp;r=no">No</a></p>`,
    expect: { access: false, keep: ["tok=Xk29Lq83Mz71&r=yes", "tok=Xk29Lq83Mz71&r=no"] },
  },
  {
    id: "p-h-sign-in-to-read",
    from: "Harbor Health Portal <noreply@harborhealth.example>",
    subject: "You have a new message",
    text: "You have a new message from Dr. Osei. Sign in to the portal to read it: https://portal.harborhealth.example/messages\nMember ID: HH-220194",
    expect: { access: false, keep: ["https://portal.harborhealth.example/messages", "HH-220194"] },
  },
  {
    id: "p-h-version-and-build",
    from: "Pixelforge <updates@pixelforge.example>",
    subject: "Pixelforge 5.2 is out",
    text: "Version 5.2.1 (build 48213) fixes 12 bugs. Download: https://pixelforge.example/download/5.2.1",
    expect: { access: false, keep: ["48213", "https://pixelforge.example/download/5.2.1"] },
  },
  {
    id: "p-h-discount-code-digits",
    from: "Tienda Sol <ofertas@tiendasol.example>",
    subject: "Descuento",
    text: "Tu código de descuento: 2025. Válido hasta el 31/03.",
    expect: { access: false, keep: ["2025"] },
  },
  {
    id: "p-h-zh-pickup-code",
    from: "丰巢 <notice@fengchao.example>",
    subject: "取件通知",
    text: "您的包裹已到达丰巢柜，取件码：682193，请及时取件。",
    expect: { access: false, keep: ["682193"] },
  },
  {
    id: "p-h-ja-order-mixed",
    from: "ふじ通販 <shop@fuji-tsuhan.example>",
    subject: "発送のお知らせ",
    text: "ご注文番号 FJ-88120 の商品を発送しました。お問い合わせ番号：5512-8830-2291",
    expect: { access: false, keep: ["FJ-88120", "5512-8830-2291"] },
  },
];

export const probeMails: MailSpec[] = [...access, ...harmless];
