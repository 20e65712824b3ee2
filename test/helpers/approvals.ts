/**
 * Presses an approval card the way a person would, for tests below the messenger level: the card is
 * issued (its buttons stored), delivered to the person's local chat, and one of its buttons pressed
 * there by the request's owner — so every check of the real press path applies.
 */
import type { ApprovalId } from "../../core/ids.js";
import { ApprovalDesk, type PressResult } from "../../core/approvals/desk.js";
import { ApprovalCards } from "../../core/approvals/card-issuer.js";
import { renderCardMarkdown, parseCardView } from "../../core/channels/card-view.js";
import { SentinelClock, SessionTracker } from "../../core/policy/time.js";
import type { Store } from "../../core/storage/ports.js";
import type { ApprovalChoiceKind } from "../../core/approvals/index.js";
import { Outbound } from "../../core/outbox/index.js";
import { systemClock } from "../../core/clock.js";

/**
 * The card of a request as a person reads it: its words as plain text (headline, notices, each
 * field as `label: value`, what the wider choices cover), its markdown for messengers, and its
 * buttons' labels.
 */
export async function cardOf(store: Store, approvalId: ApprovalId | string): Promise<{ text: string; markdown: string; labels: string[] }> {
  const row = await issueAndDeliver(store, approvalId);
  const card = parseCardView(row.card);
  if (!card) return { text: row.text, markdown: row.text, labels: row.buttons.map((b) => b.label) };
  const text = [
    card.headline.map((p) => p.text).join(""),
    ...card.notices.map((n) => n.text),
    ...card.fields.map((f) => `${f.label}: ${f.value}`),
    ...card.scopes,
  ].join("\n");
  return { text, markdown: renderCardMarkdown(card), labels: row.buttons.map((b) => b.label) };
}

/** Presses `choice` on the request's card, from the chat it was delivered to. */
export async function pressCard(store: Store, approvalId: ApprovalId | string, choice: ApprovalChoiceKind, accountId = "ada"): Promise<PressResult> {
  const row = await issueAndDeliver(store, approvalId, accountId);
  const token = (await store.sentinel.listApprovalChoices(row.approvalId)).find((c) => c.choice === choice)?.token;
  if (token === undefined) throw new Error(`the card of ${String(approvalId)} offers no ${choice} (it offers ${row.buttons.map((b) => b.label).join(", ")})`);
  const clock = new SentinelClock(store, () => new Date());
  const desk = new ApprovalDesk({ store, clock, sessions: new SessionTracker(store) });
  const request = (await store.approvals.getApprovalRequest(row.approvalId))!;
  return desk.decidePress({ buttonId: `ap:${token}`, presser: { channel: "local", accountId, personId: request.personId, address: accountId, messageRef: `card-${row.approvalId}` } });
}

async function issueAndDeliver(store: Store, approvalId: ApprovalId | string, accountId = "ada") {
  const request = await store.approvals.getApprovalRequest(approvalId as ApprovalId);
  if (request === null) throw new Error(`no approval request ${String(approvalId)}`);
  const clock = new SentinelClock(store, () => new Date());
  const cards = new ApprovalCards({ store, clock, outbound: new Outbound({ store, clock: systemClock, wake: () => undefined }) });
  const row = await cards.issue(request);
  if (!row.delivered) {
    for (;;) {
      const claimed = await store.outbox.claimNextOutbound({ owner: "test-press", now: new Date(Date.now() + 60_000), leaseMs: 60_000 });
      if (claimed === null) throw new Error(`the card of ${request.id} could not be claimed for delivery`);
      await store.outbox.markDelivered({ id: claimed.id, owner: "test-press", channel: "local", address: accountId, platformIds: [`card-${request.id}`], now: new Date() });
      if (claimed.id === row.id) break;
    }
  }
  return { ...row, approvalId: request.id };
}
