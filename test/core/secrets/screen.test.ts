import { describe, expect, it } from "vitest";
import { WITHHELD, findSecretText, withholdSecretText } from "../../../core/secrets/screen.js";

/** Each: the text and the part of it that must be withheld. */
const positives: [string, string][] = [
  ["my password is hunter2", "hunter2"],
  ["My password is Tr0ub4dor&3 please remember it", "Tr0ub4dor&3"],
  ["password: correcthorsebattery", "correcthorsebattery"],
  ["the wifi password is 'sunflower'", "sunflower"],
  ["pw for the bank = X9!kq-22", "X9!kq-22"],
  ["my PIN is 4821", "4821"],
  ["Passwort: Geheim1234", "Geheim1234"],
  ["here is my key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"],
  ["token ghp_1234567890abcdefghijABCDEFGHIJ123456 for github", "ghp_1234567890abcdefghijABCDEFGHIJ123456"],
  ["slack xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp", "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"],
  ["aws AKIAIOSFODNN7EXAMPLE ok", "AKIAIOSFODNN7EXAMPLE"],
  ["bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ is mine", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"],
  ["jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
  ["the verification code is 482913", "482913"],
  ["OTP: 7731 90", "7731 90"],
  ["your code is 55102933", "55102933"],
  ["api_key=Zx81kPq02LmNv7Rt55Yw", "Zx81kPq02LmNv7Rt55Yw"],
  ["use this: q8Z2vR7mK1xP4nW9sT3bL6yH0cJ5dF", "q8Z2vR7mK1xP4nW9sT3bL6yH0cJ5dF"],
  ["-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----"],
];

const negatives = [
  "Remind me to call Anna tomorrow at 18:30",
  "my password is wrong, can you help me reset it?",
  "the password is expired",
  "I forgot my password again",
  "Order #48213 costs 129.99 EUR, delivery on 2026-12-04",
  "Read https://example.com/articles/2024/11/how-to-make-bread?utm_source=newsletter&id=8f3e2a",
  "commit 3f2a9c1e5b7d4f6a8c0e2b4d6f8a1c3e5b7d9f0a fixed it",
  "request id 123e4567-e89b-12d3-a456-426614174000 failed",
  "the zip code is 10115",
  "HTTP status code 404 again",
  "JavaScriptDeveloperConference2024 was great",
  "Supercalifragilisticexpialidocious",
  "call +49 30 1234567 or 030-98765432",
  "my PIN is correct",
  "Bearer of bad news, sorry",
  "password manager recommendations?",
  "see www.example.org/some/long/path/with/Many1Parts2AndNumbers3 there",
  "Let's meet at Alexanderplatz 7, 10178 Berlin",
];

describe("secret-looking text recogniser", () => {
  it.each(positives)("withholds %j", (text, secret) => {
    const out = withholdSecretText(text);
    expect(out.kinds.length).toBeGreaterThan(0);
    expect(out.text).toContain(WITHHELD);
    expect(out.text).not.toContain(secret);
  });

  it.each(negatives)("lets %j pass", (text) => {
    expect(findSecretText(text)).toEqual([]);
    expect(withholdSecretText(text).text).toBe(text);
  });

  it("keeps the text around the withheld part", () => {
    expect(withholdSecretText("ok, my password is hunter2 and thanks").text).toBe(`ok, my password is ${WITHHELD} and thanks`);
  });
});

describe("more negatives around phrases", () => {
  it.each(["the password for my email is too long", "what's the password for the guest network?", "pin the message to the top"])("lets %j pass", (text) => {
    expect(findSecretText(text)).toEqual([]);
  });
});
