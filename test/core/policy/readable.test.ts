import { describe, expect, it } from "vitest";
import { webTools } from "../../../connectors/web/index.js";
import { buildApprovalCard, cardFits } from "../../../core/approvals/card.js";
import { renderCardMarkdown } from "../../../core/channels/card-view.js";
import { describeAction } from "../../../core/policy/descriptor.js";
import { EgressGuard } from "../../../core/egress/guard.js";
import { collapseRuns, decodeBody, decodeLayers, neutralise } from "../../../core/policy/readable.js";
import type { ApprovalDetails } from "../../../core/approvals/request.js";
import { summariseAction } from "../../../core/approvals/summary.js";

const egress = new EgressGuard();
const request = webTools(egress).find((t) => t.name === "http_request")!;

function card(args: Record<string, unknown>, over: Partial<ApprovalDetails> = {}) {
  const action = describeAction(request, request.policy!, args, egress);
  const summary = summariseAction(request.policy!, args, action);
  const details: ApprovalDetails = {
    v: 2,
    action,
    actionKey: "k",
    summary,
    access: "write",
    ruleId: "ask-write",
    reason: "r",
    tainted: false,
    provenance: { kind: "person", source: null, firstSeenUntrusted: false },
    offered: cardFits(summary) ? ["once", "session", "until", "always", "deny"] : ["deny"],
    restriction: null,
    ...over,
  };
  return buildApprovalCard("apr_1", details, {
    person: { timeZone: "Asia/Tokyo", locale: "en-GB" },
    buttonIds: Object.fromEntries(details.offered.map((c) => [c, `ap:${c}`])),
    taskTitle: null,
    now: new Date("2026-03-02T10:00:00Z"),
    expiresAt: new Date("2026-03-03T10:00:00Z"),
  });
}

describe("readable request content", () => {
  it("makes bidi controls, zero-width and control characters visible", () => {
    expect(neutralise("pay \u202Eevil\u202C to\u200B bob\u0007\n\tok\uFEFF")).toEqual({ text: "pay ⟦U+202E⟧evil⟦U+202C⟧ to⟦U+200B⟧ bob⟦U+0007⟧\n\tok⟦U+FEFF⟧", hidden: 5 });
    expect(neutralise("tag \u{E0041}\u{E0042}").text).toBe("tag ⟦U+E0041⟧⟦U+E0042⟧");
  });

  it("shows padding as padding", () => {
    expect(collapseRuns(`a${" ".repeat(5000)}b`)).toBe("a⟨5000 spaces⟩b");
    expect(collapseRuns("x".repeat(20))).toBe("x⟨×20⟩");
    expect(collapseRuns("short   run")).toBe("short   run");
  });

  it("decodes JSON, forms, base64 and hex (several layers) when they hold text", () => {
    expect(decodeBody('{"a":{"b":[1,"x"]}}')).toMatchObject({ format: "json", text: '{\n  "a": {\n    "b": [\n      1,\n      "x"\n    ]\n  }\n}' });
    expect(decodeBody("name=Ana&note=hi%20there", "application/x-www-form-urlencoded")).toMatchObject({ format: "form", text: "name: Ana\nnote: hi there" });
    const twice = Buffer.from(Buffer.from("the secret plan").toString("hex")).toString("base64");
    expect(decodeLayers(twice)).toEqual({ encodings: ["base64", "hex"], text: "the secret plan" });
    expect(decodeBody(twice)).toMatchObject({ format: "encoded", label: "base64 → hex → text", text: "the secret plan" });
    expect(decodeLayers(Buffer.from([0, 1, 2, 3, 250, 251, 252, 253]).toString("base64"))).toBeNull();
    expect(decodeLayers("justwords")).toBeNull();
  });
});

describe("the card a person decides on", () => {
  it("states the action in words, the full destination, the decoded body, headers with secrets as 🔒 NAME, and the expiry in the person's zone", () => {
    const view = card({ method: "POST", url: "https://api.example.com/notes?x=1", body: '{"text":"buy milk"}', headers: { Authorization: "Bearer {{secret:NOTES_KEY}}", "Content-Type": "application/json" } });
    expect(view.headline.map((p) => p.text).join("")).toBe("Familiar wants to send data to api.example.com/notes");
    const f = Object.fromEntries(view.fields.map((x) => [x.label.replace(/ \(.*/, ""), x.value]));
    expect(f).toMatchObject({ Action: "Send data (POST)", Destination: "https://api.example.com/notes?x=1", Body: '{\n  "text": "buy milk"\n}', Headers: "Authorization: 🔒 NOTES_KEY\nContent-Type: application/json" });
    expect(f["Expires"]).toBe("Tue 3 Mar, 19:00 (Asia/Tokyo), in 24 hours");
    expect(view.scopes.join("\n")).toContain("POST requests to api.example.com/notes (any body or query)");
    const text = renderCardMarkdown(view);
    expect(text).toContain("`https://api.example.com/notes?x=1`");
    expect(text.length).toBeLessThan(3000);
  });

  it("shows a look-alike host in punycode with a warning", () => {
    const view = card({ method: "POST", url: "https://аpple.com/login", body: "x" });
    expect(view.fields.find((f) => f.label === "Destination")!.value).toBe("https://xn--pple-43d.com/login");
    expect(view.notices.map((n) => n.text).join(" ")).toContain("punycode");
  });

  it("never cuts silently: an oversized body says how much is hidden and offers only Deny", () => {
    const body = "word ".repeat(1000);
    const view = card({ method: "POST", url: "https://api.example.com/notes", body });
    expect(view.buttons.map((b) => b.label)).toEqual(["Deny"]);
    const field = view.fields.find((x) => x.label.startsWith("Body"))!;
    expect(field.hidden).toBe(body.length - 1500);
    expect(view.notices[0]!.text).toMatch(/^3,500 characters of this request are not shown here/);
    expect(view.full?.text).toBe(body);
  });
});
