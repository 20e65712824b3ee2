/** The deterministic mail filter: each field, AND across fields, OR within lists, case and accents folded. */
import { describe, expect, it } from "vitest";
import { describeMailFilter, mailFilterSchema, matchesMail, type MailEventFacts } from "../../../connectors/email/watch-filter.js";

const mail = (over: Partial<MailEventFacts> = {}): MailEventFacts => ({
  from: "coach@mail.school.example",
  to: ["ana@home.example"],
  cc: [],
  subject: "Tryouts on Friday — Équipe B",
  listId: "news.school.example",
  hasAttachments: false,
  verified: true,
  ...over,
});

describe("mail filter", () => {
  it("matches senders by address or domain (subdomains too), never by a look-alike", () => {
    expect(matchesMail({ from: ["school.example"] }, mail())).toBe(true);
    expect(matchesMail({ from: ["@school.example"] }, mail())).toBe(true);
    expect(matchesMail({ from: ["coach@mail.school.example"] }, mail())).toBe(true);
    expect(matchesMail({ from: ["other.example", "COACH@MAIL.SCHOOL.EXAMPLE"] }, mail())).toBe(true);
    expect(matchesMail({ from: ["school.example"] }, mail({ from: "coach@evilschool.example" }))).toBe(false);
    expect(matchesMail({ from: ["school.example"] }, mail({ from: "school.example@evil.example" }))).toBe(false);
    expect(matchesMail({ from: ["school.example"] }, mail({ from: null }))).toBe(false);
  });

  it("requires every subject word, folding case and accents; ANDs the fields", () => {
    expect(matchesMail({ subjectContains: ["tryouts", "equipe"] }, mail())).toBe(true);
    expect(matchesMail({ subjectContains: ["tryouts", "cancelled"] }, mail())).toBe(false);
    expect(matchesMail({ from: ["school.example"], subjectContains: ["tryouts"] }, mail({ from: "x@other.example" }))).toBe(false);
    expect(matchesMail({ to: ["home.example"] }, mail({ to: [], cc: ["ana@home.example"] }))).toBe(true);
    expect(matchesMail({ hasAttachment: true }, mail())).toBe(false);
    expect(matchesMail({ list: true }, mail())).toBe(true);
    expect(matchesMail({ list: "<news.school.example>" }, mail())).toBe(true);
    expect(matchesMail({ list: true }, mail({ listId: null }))).toBe(false);
    expect(matchesMail({ verifiedOnly: true }, mail({ verified: false }))).toBe(false);
    expect(matchesMail({}, mail())).toBe(true);
  });

  it("validates strictly and reads in words", () => {
    expect(mailFilterSchema.safeParse({ sender: "x" }).success).toBe(false);
    expect(mailFilterSchema.safeParse({ from: [""] }).success).toBe(false);
    expect(describeMailFilter({ from: ["school.example"], subjectContains: ["tryouts"] })).toBe("from school.example, subject has “tryouts”");
    expect(describeMailFilter({})).toBe("any new mail");
  });
});
