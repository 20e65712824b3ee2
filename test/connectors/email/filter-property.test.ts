import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { filterMail } from "../../../connectors/email/safety.js";

/**
 * Properties of the mail-safety filter over generated input: it never throws, always returns
 * `subject + "\n\n" + body`, and a code behind an access phrase never survives, whatever text,
 * HTML or separators surround it.
 */
const phrases = [
  "Your verification code is",
  "Ihr Bestätigungscode lautet:",
  "Votre code de vérification :",
  "Tu código de verificación es",
  "Seu código de verificação é",
  "您的验证码是：",
  "認証コード：",
  "Your one-time password:",
  "Use this code to sign in:",
];
const separators = ["", " ", "-", " - ", "  ", ".", "\u200b", "\u00a0"];

describe("mail-safety filter properties", () => {
  it("never throws and keeps its shape on arbitrary text and HTML", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ unit: "grapheme", maxLength: 400 }), fc.boolean(), (subject, body, asHtml) => {
        const r = filterMail(asHtml ? { subject, html: body } : { subject, text: body });
        expect(r.text).toBe(`${r.subject}\n\n${r.body}`);
        expect(r.subject).not.toContain("\n");
      }),
      { numRuns: 300 },
    );
  });

  it("labelled harmless numbers always pass where no access word is near", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("Order number:", "Tracking number", "Rechnungsnummer:", "Numéro de commande :", "Número de pedido:", "订单号：", "注文番号："),
        fc.integer({ min: 1_000_000, max: 99_999_999 }),
        fc.string({ unit: fc.constantFrom(..."abc xyz.,\n"), maxLength: 80 }),
        fc.boolean(),
        (label, n, around, asHtml) => {
          const body = `${around}\n${label} ${n}\n${around}`;
          const r = asHtml ? filterMail({ subject: "Your order", html: `<p>${body.replace(/\n/g, "<br>")}</p>` }) : filterMail({ subject: "Your order", text: body });
          expect(r.text).toContain(String(n));
          expect(r.removed).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a code behind an access phrase never passes, in any surrounding and split", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...phrases),
        fc.integer({ min: 100_000, max: 999_999 }),
        fc.constantFrom(...separators),
        fc.string({ unit: fc.constantFrom(..."abc xyz.,\n"), maxLength: 80 }),
        fc.string({ unit: fc.constantFrom(..."def uvw.,\n"), maxLength: 80 }),
        fc.boolean(),
        (phrase, n, sep, before, after, asHtml) => {
          const code = String(n);
          const shown = `${code.slice(0, 3)}${sep}${code.slice(3)}`;
          const body = `${before}\n${phrase} ${shown}\n${after}`;
          const html = `<p>${body.replace(/\n/g, "<br>").replace(shown, `<b>${code.slice(0, 3)}</b>${sep}<span>${code.slice(3)}</span>`)}</p>`;
          const r = asHtml ? filterMail({ subject: "Hello", html }) : filterMail({ subject: "Hello", text: body });
          expect(r.text.replace(/[\s.\u00a0-]/g, "")).not.toContain(code);
        },
      ),
      { numRuns: 400 },
    );
  });
});
