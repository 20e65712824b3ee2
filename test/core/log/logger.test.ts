import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, redact } from "../../../core/log/logger.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
}

describe("logger redaction", () => {
  it("redacts secret keys at any depth and secret values anywhere", () => {
    const { lines, destination } = capture();
    const { logger, addSecret } = createLogger({ level: "info", secrets: ["sk-live-abcdef123456"], destination });
    addSecret("xoxb-slack-token-999");
    logger.info(
      { config: { OPENAI_API_KEY: "whatever-value", nested: { botToken: "123:abc", password: "pw" } }, url: "https://x/?key=sk-live-abcdef123456" },
      "calling with xoxb-slack-token-999 now",
    );
    const out = lines.join("");
    expect(out).not.toContain("sk-live-abcdef123456");
    expect(out).not.toContain("xoxb-slack-token-999");
    expect(out).not.toContain("whatever-value");
    expect(out).not.toContain("123:abc");
    expect(out).toContain("[redacted]");
    expect(out).toContain("calling with [redacted] now");
  });

  it("redacts secrets inside error messages", () => {
    const { lines, destination } = capture();
    const { logger } = createLogger({ level: "info", secrets: ["topsecretvalue"], destination });
    logger.error({ err: new Error("auth failed for topsecretvalue") }, "boom");
    expect(lines.join("")).not.toContain("topsecretvalue");
    expect(lines.join("")).toContain("auth failed for [redacted]");
  });

  it("keeps non-secret fields intact", () => {
    expect(redact({ user: "ana", count: 3, when: "2026-01-01" }, ["nothing-here"])).toEqual({ user: "ana", count: 3, when: "2026-01-01" });
  });
});
