import { describe, expect, it } from "vitest";
import { organizationalDomain, parseAuthenticationResults, parseHeaderBlock, verifySender } from "../../../connectors/email/safety.js";

/**
 * Issue 21 point 4 and field case E4 (a forged `dkim=pass` below the real header, trusted by an
 * agent): the RFC 8601 parser, the first-header-from-our-server rule, DMARC and aligned DKIM/SPF.
 */
const options = { authservIds: ["mx.home.example"] };
const verify = (headers: string) => verifySender(parseHeaderBlock(`${headers}\r\n`), options);

describe("Authentication-Results parser (RFC 8601)", () => {
  it("reads methods, results, reasons and properties, skipping comments and folding", () => {
    const parsed = parseAuthenticationResults(
      'mx.home.example 1 (comment (nested) here);\r\n dkim=pass (good signature) header.d=bank.example header.i=@bank.example header.b="Ab12";\r\n spf=softfail smtp.mailfrom=bounce@esp.example reason="not permitted";\r\n dmarc/1=pass header.from=bank.example',
    );
    expect(parsed).toEqual({
      authservId: "mx.home.example",
      results: [
        { method: "dkim", result: "pass", reason: null, properties: { "header.d": "bank.example", "header.i": "@bank.example", "header.b": "Ab12" } },
        { method: "spf", result: "softfail", reason: "not permitted", properties: { "smtp.mailfrom": "bounce@esp.example" } },
        { method: "dmarc", result: "pass", reason: null, properties: { "header.from": "bank.example" } },
      ],
    });
    expect(parseAuthenticationResults("mx.home.example; none")).toEqual({ authservId: "mx.home.example", results: [] });
  });

  it("refuses broken structure instead of guessing", () => {
    for (const bad of ["", "; dkim=pass", "mx.home.example; dkim=", "mx.home.example; dkim=pass header.d", "mx.home.example (unclosed; dkim=pass", "mx.home.example dkim=pass"]) {
      expect(parseAuthenticationResults(bad), bad).toBeNull();
    }
  });
});

describe("sender verification", () => {
  it("verified by DMARC pass from the receiving server", () => {
    expect(verify("Authentication-Results: mx.home.example; dmarc=pass header.from=bank.example\r\nFrom: Bank <alerts@bank.example>")).toEqual({
      verified: true,
      method: "dmarc",
      domain: "bank.example",
      detail: "DMARC passed for bank.example",
    });
  });

  it("verified by DKIM or SPF pass aligned with the From domain (relaxed: the organisational domain)", () => {
    expect(verify("Authentication-Results: mx.home.example; dkim=pass header.d=mail.bank.co.uk\r\nFrom: alerts@bank.co.uk")).toMatchObject({ verified: true, method: "dkim" });
    expect(verify("Authentication-Results: mx.home.example; spf=pass smtp.mailfrom=bounce@em.shop.example\r\nFrom: orders@shop.example")).toMatchObject({ verified: true, method: "spf" });
  });

  it("a pass for another domain is not aligned: unverified, in words", () => {
    const r = verify("Authentication-Results: mx.home.example; dkim=pass header.d=esp.example; spf=pass smtp.mailfrom=esp.example\r\nFrom: ceo@bank.example");
    expect(r).toEqual({ verified: false, reason: "not-aligned", domain: "bank.example", detail: "DKIM passed for esp.example, which is not aligned with the From domain bank.example" });
    // co.uk is a public suffix: two different organisations under it are not aligned.
    expect(verify("Authentication-Results: mx.home.example; dkim=pass header.d=evil.co.uk\r\nFrom: a@bank.co.uk")).toMatchObject({ verified: false, reason: "not-aligned" });
    expect(verify("Authentication-Results: mx.home.example; dkim=pass header.d=attacker.github.io\r\nFrom: a@victim.github.io")).toMatchObject({ verified: false, reason: "not-aligned" });
  });

  it("E4: a forged dkim=pass below the receiving server's real header does not count", () => {
    const r = verify(
      "Authentication-Results: mx.home.example; dkim=fail header.d=bank.example; spf=fail smtp.mailfrom=bank.example; dmarc=fail header.from=bank.example\r\n" +
        "Received: from evil.example by mx.home.example\r\n" +
        "Authentication-Results: mx.home.example; dkim=pass header.d=bank.example; dmarc=pass header.from=bank.example\r\n" +
        "From: Bank <alerts@bank.example>",
    );
    expect(r).toMatchObject({ verified: false, reason: "dmarc-failed" });
  });

  it("E4: a forged header on top, from another authserv-id, is not the receiving server's", () => {
    const r = verify("Authentication-Results: mx.bank.example; dmarc=pass header.from=bank.example\r\nFrom: alerts@bank.example");
    expect(r).toMatchObject({ verified: false, reason: "untrusted-authserv-id" });
  });

  it("no header, a broken header, no From or several From: unverified", () => {
    expect(verify("From: a@bank.example")).toMatchObject({ verified: false, reason: "no-authentication-results" });
    expect(verify("Authentication-Results: mx.home.example; dkim=\r\nFrom: a@bank.example")).toMatchObject({ reason: "malformed-authentication-results" });
    expect(verify("Authentication-Results: mx.home.example; dmarc=pass")).toMatchObject({ reason: "no-from" });
    expect(verify("Authentication-Results: mx.home.example; dmarc=pass\r\nFrom: a@bank.example, b@evil.example")).toMatchObject({ reason: "several-from" });
    expect(verify("Authentication-Results: mx.home.example; dkim=neutral; spf=none\r\nFrom: a@bank.example")).toEqual({
      verified: false,
      reason: "no-pass",
      domain: "bank.example",
      detail: "no authentication method passed for bank.example (dkim=neutral, spf=none)",
    });
  });

  it("a DMARC pass for another From domain than the mail's does not count", () => {
    expect(verify("Authentication-Results: mx.home.example; dmarc=pass header.from=evil.example\r\nFrom: a@bank.example")).toMatchObject({ verified: false });
  });

  it("organisational domains follow the Public Suffix List", () => {
    expect(organizationalDomain("mail.bank.co.uk")).toBe("bank.co.uk");
    expect(organizationalDomain("A.B.Example.COM")).toBe("example.com");
    expect(organizationalDomain("münchen.example")).toBe("xn--mnchen-3ya.example");
    expect(organizationalDomain("foo.github.io")).toBe("foo.github.io");
  });
});
