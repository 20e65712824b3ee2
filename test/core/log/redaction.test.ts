import { describe, expect, it } from "vitest";
import { SecretRegistry, scrubSecrets, scrubTokenShapes, secretsIn } from "../../../core/log/redaction.js";

const CANARY = "CANARY-7f3Q/x+9&<z>\"'k2";
const secrets = [{ name: "API", value: CANARY }];
const he = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

const encodings: [string, string][] = [
  ["plain", CANARY],
  ["URL-encoded", encodeURIComponent(CANARY)],
  ["form-encoded", encodeURIComponent(CANARY).replace(/%20/g, "+")],
  ["base64", Buffer.from(CANARY).toString("base64")],
  ["base64url", Buffer.from(CANARY).toString("base64url")],
  ["hex", Buffer.from(CANARY).toString("hex")],
  ["HEX", Buffer.from(CANARY).toString("hex").toUpperCase()],
  ["JSON-escaped", JSON.stringify(CANARY).slice(1, -1)],
  ["HTML-escaped", he(CANARY)],
];

describe("scrubSecrets", () => {
  it.each(encodings)("removes the %s form", (_kind, form) => {
    const text = `before ${form} after`;
    const out = scrubSecrets(text, secrets);
    expect(out).toBe("before {{secret:API}} after");
    expect(secretsIn(text, secrets)).toHaveLength(1);
  });

  it("removes a value inside a longer base64 string (HTTP Basic user:secret), at each alignment", () => {
    for (const user of ["u", "us", "use", "user:"]) {
      const basic = Buffer.from(`${user}:${CANARY}`).toString("base64");
      expect(secretsIn(`Authorization: Basic ${basic}`, secrets)).toHaveLength(1);
      const out = scrubSecrets(basic, secrets);
      expect(out).toContain("{{secret:API}}");
      expect(Buffer.from(out.replace("{{secret:API}}", ""), "base64").toString("utf8")).not.toContain(CANARY.slice(2, -2));
    }
  });

  it("leaves text without the value alone and ignores values shorter than 6 characters", () => {
    expect(scrubSecrets("nothing to see, CANARY-7f3 partial", secrets)).toBe("nothing to see, CANARY-7f3 partial");
    expect(scrubSecrets("abc abc", [{ value: "abc" }])).toBe("abc abc");
    expect(scrubSecrets(`x ${CANARY}`, [CANARY])).toBe("x [redacted]");
  });

  it("finds the value in URL text the URL parser re-encoded", () => {
    const url = new URL(`https://evil.example/?q=${CANARY}`).href;
    expect(secretsIn(url, secrets)).toHaveLength(1);
  });
});

describe("token shapes and the registry", () => {
  it("redacts platform tokens in error texts", () => {
    const cases = [
      "GET https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ/getMe failed",
      "slack error for xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
      "Incorrect API key provided: sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123",
      "Authorization: Bearer abc.def-ghi_jkl~mno1",
      "github ghp_1234567890abcdefghijABCDEFGHIJ123456",
    ];
    for (const text of cases) {
      const out = scrubTokenShapes(text);
      expect(out).toContain("[redacted]");
      for (const token of ["AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ", "AbCdEfGhIjKlMnOp", "abc.def-ghi", "ghp_1234567890"]) expect(out).not.toContain(token);
    }
    expect(scrubTokenShapes("Bearer [redacted] stays, and so do 12:30 and task-1234")).toBe("Bearer [redacted] stays, and so do 12:30 and task-1234");
  });

  it("scrubs registered values in every encoding plus token shapes, deeply", () => {
    const registry = new SecretRegistry(["config-token-VALUE-42"]);
    registry.add(CANARY, "API");
    const out = registry.scrubDeep({ a: [`x ${Buffer.from(CANARY).toString("base64")}`], b: { c: "config-token-VALUE-42 and xoxb-1234567890-abcdefghijk" } });
    expect(JSON.stringify(out)).not.toContain("config-token-VALUE-42");
    expect(JSON.stringify(out)).not.toContain(Buffer.from(CANARY).toString("base64"));
    expect(JSON.stringify(out)).not.toContain("xoxb-1234567890");
  });
});

describe("token shapes leave prose alone", () => {
  it.each(["Token validation failed", "Bot responded with an error", "Basic authentication required", "skill-based routing", "meeting at 10:30 with 12345 people"])("%j", (text) => {
    expect(scrubTokenShapes(text)).toBe(text);
  });
});
