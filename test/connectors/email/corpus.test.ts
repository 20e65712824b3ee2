import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appears, evaluateMailSet, mailFigures, parseMailSet } from "../../eval/mail-filter-eval.js";

/**
 * The CI floor of issue 21 point 2 on the project's labelled mail sets: nothing that grants access
 * passes (every labelled secret is gone from the text the model sees) and at most 2 % of the
 * harmless numbers and links are removed. `corpus.jsonl` is the main set (≥ 150 mails, both kinds,
 * 7 languages); `held-out.jsonl` was written after the rules from the issue text alone (its first
 * score, before tuning, is in held-out-first-score.txt); `probes.jsonl` attacks the rules from outside.
 */
const dir = join(import.meta.dirname, "../../eval/mail");
const sets = ["corpus.jsonl", "probes.jsonl", "held-out.jsonl"];

describe("mail-safety filter on the labelled sets", () => {
  it.each(sets)("%s: no secret passes, at most 2 percent of harmless numbers and links removed", async (file) => {
    const { lines, errors } = parseMailSet(readFileSync(join(dir, file), "utf8"));
    expect(errors).toEqual([]);
    const results = await evaluateMailSet(lines);
    const f = mailFigures(results);
    const leaks = results.filter((r) => r.leaked.length).map((r) => `${r.id}: ${r.leaked.join(", ")}`);
    const lost = results.filter((r) => r.missing.length).map((r) => `${r.id}: ${r.missing.join(", ")}`);
    expect(f.leaks, leaks.join("\n")).toBe(0);
    expect(f.harmlessRemovedRate, lost.join("\n")).toBeLessThanOrEqual(0.02);
    expect(f.secrets).toBeGreaterThan(15);
    expect(f.keepItems).toBeGreaterThan(15);
  }, 180_000);

  it("the main corpus keeps its promised size and coverage", () => {
    const { lines } = parseMailSet(readFileSync(join(dir, "corpus.jsonl"), "utf8"));
    const access = lines.filter((l) => l.expect?.access);
    const harmless = lines.filter((l) => l.expect && !l.expect.access);
    expect(lines.length).toBeGreaterThanOrEqual(150);
    expect(access.length).toBeGreaterThanOrEqual(60);
    expect(harmless.length).toBeGreaterThanOrEqual(80);
    for (const lang of ["en", "de", "fr", "es", "pt", "zh", "ja"]) {
      expect(access.some((l) => l.id.startsWith(`${lang}-`)), `access mail in ${lang}`).toBe(true);
      expect(harmless.some((l) => l.id.startsWith(`h-${lang}-`)), `harmless mail in ${lang}`).toBe(true);
    }
    const emls = lines.map((l) => l.eml);
    for (const shape of [/quoted-printable/i, /base64/i, /text\/html/i, /charset=Shift_JIS/i, /charset=GB2312/i, /charset=ISO-8859-1/i, /multipart\/alternative/i]) {
      expect(emls.some((e) => shape.test(e)), String(shape)).toBe(true);
    }
  });

  it("counts a code as passed in any spacing or full-width form, and never a near miss", () => {
    expect(appears("code 4 8 2 9 1 7 here", "482917")).toBe(true);
    expect(appears("code ４８２９１７", "482917")).toBe(true);
    expect(appears("code 482-917", "482917")).toBe(true);
    expect(appears("code [sign-in code removed]", "482917")).toBe(false);
    expect(appears("order 4829173", "482917")).toBe(true);
    expect(appears("4829 17x", "482917")).toBe(true);
    expect(appears("48291", "482917")).toBe(false);
  });

  it("reports an unreadable line with its line number and id, never skipping it", () => {
    const { lines, errors } = parseMailSet('{"id":"a","eml":"Subject: x\\r\\n\\r\\nhi"}\n{"id":"b"}\nnot json\n');
    expect(lines).toHaveLength(1);
    expect(errors.map((e) => [e.line, e.id])).toEqual([
      [2, "b"],
      [3, null],
    ]);
  });

  it("npm run eval:mail-filter -- FILE --json prints exactly {results: [{id, text, removed}]}", () => {
    const tmp = mkdtempSync(join(tmpdir(), "familiar-mail-eval-"));
    try {
      const file = join(tmp, "set.jsonl");
      const eml = "From: a@b.example\r\nSubject: Your login code\r\n\r\nYour login code is 553190.\r\nOrder 7731920.\r\n";
      writeFileSync(file, `${JSON.stringify({ id: "m1", eml, label: "extra fields are fine" })}\n`);
      const run = spawnSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "../../eval/mail-filter.ts"), file, "--json"], { encoding: "utf8", timeout: 60_000 });
      expect(run.status, run.stderr).toBe(0);
      const out = JSON.parse(run.stdout) as unknown;
      expect(out).toEqual({ results: [{ id: "m1", text: "Your login code\n\nYour login code is [sign-in code removed].\nOrder 7731920.\n", removed: [{ kind: "sign-in-code", marker: "[sign-in code removed]" }] }] });
      const summary = spawnSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "../../eval/mail-filter.ts"), file], { encoding: "utf8", timeout: 60_000 });
      expect(summary.stdout).toContain("m1: sign-in-code");
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 120_000);
});
