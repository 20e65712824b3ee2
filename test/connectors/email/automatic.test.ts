import { describe, expect, it } from "vitest";
import {
  AUTOMATIC_SEND_HEADERS,
  automaticSendBudget,
  isFamiliarMessageId,
  mintMessageId,
  neverAnswerReason,
  parseHeaderBlock,
  parseMessageId,
  replyThreadHeaders,
  threadKey,
  type NeverAnswerReason,
} from "../../../connectors/email/safety.js";

/**
 * Issue 21 point 3 and field case E1 (an agent answering its own mail thousands of times): every
 * header rule of `neverAnswerReason` on its own, a person's mail that may be answered, Familiar's
 * Message-IDs, the per-thread budget and the headers of an automatic send.
 */
const own = { ownAddresses: ["ana@home.example", "Ana.Lima@Work.Example"] };
const person = "From: Bruno <bruno@friends.example>\r\nTo: ana@home.example\r\nSubject: Dinner on Friday?\r\nMessage-ID: <CAB123@mail.friends.example>\r\nReturn-Path: <bruno@friends.example>\r\n";
const mail = (extra: string, base = person) => ({ headers: parseHeaderBlock(`${extra}${base}\r\n`) });
const reasonOf = (extra: string, base?: string): NeverAnswerReason | undefined => neverAnswerReason(mail(extra, base), own)?.reason;

describe("never answered", () => {
  it("an ordinary mail from a person may be answered", () => {
    expect(neverAnswerReason(mail(""), own)).toBeNull();
    expect(reasonOf("Auto-Submitted: no\r\n")).toBeUndefined();
  });

  it("our own Message-ID, or a reply to one in In-Reply-To or References (E1)", () => {
    const ours = mintMessageId("home.example");
    const base = person.replace(/Message-ID: .*\r\n/, "");
    expect(reasonOf(`Message-ID: ${ours}\r\n`, base)).toBe("own-message-id");
    expect(reasonOf(`In-Reply-To: ${ours}\r\n`)).toBe("replies-to-own-message");
    expect(reasonOf(`References: <a@x.example>\r\n ${ours.toUpperCase()} <b@y.example>\r\n`)).toBe("replies-to-own-message");
  });

  it("from any of the person's own addresses, plus-addressing and case folded (E1)", () => {
    const base = person.replace("From: Bruno <bruno@friends.example>", "From: Ana <ana+familiar@HOME.example>");
    expect(neverAnswerReason(mail("", base), own)).toEqual({ reason: "from-own-address", detail: "from is the person's own address ana+familiar@home.example" });
    expect(reasonOf("Reply-To: ana.lima@work.example\r\n")).toBe("from-own-address");
  });

  it.each([
    ["Auto-Submitted: auto-replied\r\n", "auto-submitted"],
    ["Auto-Submitted: auto-generated\r\n", "auto-submitted"],
    ["X-Autoreply: yes\r\n", "auto-submitted"],
    ["Precedence: bulk\r\n", "precedence"],
    ["Precedence: list\r\n", "precedence"],
    ["Precedence: junk\r\n", "precedence"],
    ["X-Auto-Response-Suppress: OOF, AutoReply\r\n", "auto-response-suppress"],
    ["List-Id: Parents <parents.school.example>\r\n", "mailing-list"],
    ["List-Unsubscribe: <https://school.example/u/1>\r\n", "mailing-list"],
    ["Content-Type: multipart/report; report-type=delivery-status; boundary=x\r\n", "delivery-report"],
  ])("%s", (header, reason) => {
    expect(reasonOf(header)).toBe(reason);
  });

  it("a null return path (a bounce)", () => {
    expect(reasonOf("", person.replace("Return-Path: <bruno@friends.example>", "Return-Path: <>"))).toBe("null-return-path");
  });

  it.each([
    "Out of Office: Dinner on Friday?",
    "Automatic reply: Dinner on Friday?",
    "Abwesenheitsnotiz: Abendessen",
    "Réponse automatique : dîner",
    "Respuesta automática: cena",
    "Resposta automática: jantar",
    "自动回复：周五晚餐",
    "自動応答: 金曜日の夕食",
  ])("an out-of-office answer: %s", (subject) => {
    expect(neverAnswerReason({ headers: mail("").headers, subject }, own)?.reason).toBe("out-of-office");
  });

  it.each(["no-reply@shop.example", "noreply@shop.example", "do-not-reply@bank.example", "MAILER-DAEMON@mx.example", "postmaster@mx.example", "bounces+123@esp.example", "ne-pas-repondre@impots.example"])("a machine sender: %s", (address) => {
    expect(reasonOf("", person.replace("bruno@friends.example>", `${address}>`))).toBe("machine-sender");
  });

  it("the first rule in the documented order decides", () => {
    expect(reasonOf(`In-Reply-To: ${mintMessageId("home.example")}\r\nPrecedence: bulk\r\n`)).toBe("replies-to-own-message");
  });
});

describe("Familiar's Message-IDs", () => {
  it("are minted in one recognisable pattern and parsed back", () => {
    const id = mintMessageId("Home.Example", new Uint8Array(15).fill(255));
    expect(id).toBe("<familiar.777777777777777777777777@home.example>");
    expect(parseMessageId(id)).toEqual({ token: "777777777777777777777777", domain: "home.example" });
    expect(isFamiliarMessageId(mintMessageId("home.example"))).toBe(true);
    expect(mintMessageId("home.example")).not.toBe(mintMessageId("home.example"));
    expect(isFamiliarMessageId("<familiar.short@home.example>")).toBe(false);
    expect(isFamiliarMessageId("<CAB123@mail.friends.example>")).toBe(false);
    expect(() => mintMessageId("bad domain")).toThrow(RangeError);
  });
});

describe("automatic sends", () => {
  const t0 = new Date("2025-03-02T10:00:00Z");
  const at = (hours: number) => new Date(t0.getTime() + hours * 3_600_000);

  it("at most 3 per thread in any 24 hours, counted per thread", () => {
    const history = [0, 1, 2].map((h) => ({ threadKey: "<t1@x>", sentAt: at(h) }));
    expect(automaticSendBudget(history.slice(0, 2), "<t1@x>", at(3))).toEqual({ allowed: true, remaining: 0 });
    expect(automaticSendBudget(history, "<T1@X>", at(3))).toEqual({ allowed: false, remaining: 0, nextAllowedAt: at(24) });
    expect(automaticSendBudget(history, "<t2@x>", at(3))).toEqual({ allowed: true, remaining: 2 });
    expect(automaticSendBudget(history, "<t1@x>", at(24.01)).allowed).toBe(true);
    expect(automaticSendBudget(history, "<t1@x>", at(3), 5)).toEqual({ allowed: true, remaining: 1 });
    expect(automaticSendBudget([], "<t1@x>", at(3), 0)).toEqual({ allowed: false, remaining: 0, nextAllowedAt: null });
    expect(() => automaticSendBudget([], "<t1@x>", at(3), 1.5)).toThrow(RangeError);
  });

  it("carry Auto-Submitted: auto-replied and thread onto their parent", () => {
    expect(AUTOMATIC_SEND_HEADERS["Auto-Submitted"]).toBe("auto-replied");
    const parent = parseHeaderBlock("Message-ID: <m2@x.example>\r\nReferences: <m0@x.example> <m1@x.example>\r\nIn-Reply-To: <m1@x.example>\r\n");
    expect(replyThreadHeaders(parent)).toEqual({ inReplyTo: "<m2@x.example>", references: "<m0@x.example> <m1@x.example> <m2@x.example>" });
    expect(threadKey(parent)).toBe("<m0@x.example>");
    expect(threadKey(parseHeaderBlock("Message-ID: <Solo@X.example>\r\n"))).toBe("<solo@x.example>");
  });
});
