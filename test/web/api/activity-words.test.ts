import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KIND_WORDS } from "../../../web/shared/activity-kinds.js";
import {
  RULE_WORDS,
  activityInWords,
  channelsInWords,
  kindInWords,
  ruleInWords,
} from "../../../web/api/activity-words.js";
import { methodPhrase } from "../../../core/policy/patterns.js";

/** Every `.ts` file under the product's source folders. */
function sources(): string[] {
  return ["core", "bots", "jobs", "connectors"].flatMap((dir) =>
    readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .map((f) => readFileSync(join(dir, f), "utf8")),
  );
}

const data = (fields: Record<string, string | string[]>) => ({
  get: (k: string) => (typeof fields[k] === "string" ? fields[k] : null),
  list: (k: string) => (Array.isArray(fields[k]) ? fields[k] : []),
});

describe("activity in words", () => {
  it("has a label for every audit kind the product writes, and every Sentinel rule id", () => {
    const text = sources().join("\n");
    const kinds = new Set([...text.matchAll(/appendAudit\(\{[^}]*?kind: "([a-z]+\.[a-z_]+)"/gs)].map((m) => m[1]!));
    expect(kinds.size).toBeGreaterThan(10);
    for (const kind of kinds) expect(KIND_WORDS, kind).toHaveProperty([kind]);
    const policy = readFileSync("core/policy/rules.ts", "utf8");
    const rules = new Set([...policy.matchAll(/id: "((?:allow|ask|deny)-[a-z-]+)"/g)].map((m) => m[1]!));
    expect(rules.size).toBeGreaterThan(3);
    for (const rule of rules) expect(RULE_WORDS, rule).toHaveProperty([rule]);
  });

  it("reads as words even for a kind or rule it has never seen", () => {
    expect(kindInWords("widget.made_up")).toBe("Widget made up");
    expect(ruleInWords("ask-something-new")).toBe("ask something new");
  });

  it("says the web chat for the local channel, and what was sent instead of its length", () => {
    expect(channelsInWords("Sent a message on local (59 characters)")).toBe("Sent a message in the web chat (59 characters)");
    expect(channelsInWords("Approved via telegram")).toBe("Approved via Telegram");
    expect(channelsInWords("Revoked web.fetch → GET anything on example.com (always)")).toBe("Revoked read (GET) anything on example.com (always)");
    expect(channelsInWords("Revoked web.request → POST requests to api.example.com/notes (any body or query)")).toBe("Revoked send data (POST) to api.example.com/notes (any body or query)");
    const sent = activityInWords("outbound.sent", "Sent a message on local (59 characters)", data({ channel: "local", start: "Fetched the deals." }));
    expect(sent).toEqual({ label: "Message sent", summary: "Sent in the web chat: “Fetched the deals.”", why: null });
    const decision = activityInWords("sentinel.decision", "allow POST x (web.request) — allow-granted", data({ method: "POST", destinations: ["api.example.com/notes"], effect: "allow", ruleId: "allow-granted", tool: "web.request" }));
    expect(decision).toEqual({ label: "Permission check", summary: "Allowed: send data (POST) to api.example.com/notes", why: "you allowed this before" });
  });

  it("phrases methods as a person would say them", () => {
    expect(methodPhrase("POST", "api.example.com/notes")).toBe("Send data (POST) to api.example.com/notes");
    expect(methodPhrase("POST")).toBe("Send data (POST)");
    expect(methodPhrase("GET", "example.com/")).toBe("Read (GET) example.com/");
    expect(methodPhrase("FROB", "x")).toBe("FROB x");
  });
});
