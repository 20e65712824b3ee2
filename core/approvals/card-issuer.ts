/**
 * Puts approval cards into the durable outbox and keeps them truthful: `issue` sends a pending card
 * (markdown `text` for messengers plus the structured `card` for surfaces that draw it) and stores
 * its buttons' tokens together with the card's outbox row — in one transaction, so a card never has
 * buttons that map to nothing; `settle` edits the card to show the outcome without buttons;
 * `tellPaused` tells the person, once, that a task's approvals were paused after repeated denials.
 */
import type { Store } from "../storage/index.js";
import type { ApprovalChoiceKind, ApprovalRequest } from "./records.js";
import type { Button } from "../channels/records.js";
import type { OutboxMessage } from "../outbox/records.js";
import { chatLogId, parseCardView, renderCardMarkdown, type CardView } from "../channels/index.js";
import { approvalButtonId, newButtonToken } from "./desk.js";
import { MAX_DENIALS_PER_PERSON, MAX_DENIALS_PER_TASK } from "./denials.js";
import { buildApprovalCard, decidedCard } from "./card.js";
import { parseApprovalDetails } from "./request.js";
import type { Outbound } from "../outbox/index.js";
import type { SentinelClock } from "../policy/index.js";

/** The outbox delivery key of a request's card. */
export function cardDeliveryKey(request: Pick<ApprovalRequest, "id">): string {
  return `approval:${request.id}`;
}

/** What the issuer needs. */
export interface CardIssuerDeps {
  store: Pick<Store, "persons" | "tasks" | "outbox" | "sentinel" | "transaction">;
  clock: SentinelClock;
  /** Where cards and notices are queued; the caller wakes delivery (`Outbound.wake`) when done. */
  outbound: Pick<Outbound, "queue">;
}

/** Issues, settles and explains approval cards (see module doc). */
export class ApprovalCards {
  constructor(private readonly deps: CardIssuerDeps) {}

  /**
   * Enqueues the pending card of `request` with fresh button tokens. Requests Sentinel did not
   * write in the current format get a card with only an explanation (they can only expire).
   * Returns the card's outbox row.
   */
  async issue(request: ApprovalRequest): Promise<OutboxMessage> {
    const { store } = this.deps;
    const tokens = new Map<ApprovalChoiceKind, string>();
    for (const c of parseApprovalDetails(request)?.offered ?? []) tokens.set(c, newButtonToken());
    const card = await this.view(request, tokens);
    const now = await this.deps.clock.now();
    return store.transaction(async () => {
      const row = await this.deps.outbound.queue(
        { personId: request.personId, deliveryKey: cardDeliveryKey(request), text: renderCardMarkdown(card), buttons: card.buttons.map((b) => ({ id: b.id, label: b.label })), card },
        { wake: false, now },
      );
      // A card enqueued before (same delivery key) keeps its own buttons; ours were never shown.
      if (row.buttons[0]?.id === card.buttons[0]?.id && tokens.size > 0) {
        await store.sentinel.recordApprovalChoices([...tokens].map(([choice, token]) => ({ token, approvalId: request.id, choice, outboxId: row.id })), now);
      }
      return row;
    });
  }

  /** Enqueues the edit of the card to `status` (no buttons). */
  async settle(request: ApprovalRequest, status: NonNullable<CardView["status"]>, outcome: string): Promise<void> {
    const now = await this.deps.clock.now();
    const card = decidedCard(await this.view(request, null), status);
    const text = renderCardMarkdown(card);
    // Enqueueing the card's key again returns the card row itself (idempotent by delivery key).
    const { outbound } = this.deps;
    const original = await outbound.queue({ personId: request.personId, deliveryKey: cardDeliveryKey(request), text, buttons: [], card }, { wake: false, now });
    await outbound.queue({ personId: request.personId, deliveryKey: `${cardDeliveryKey(request)}:${outcome}`, text, buttons: [], card, editOf: original.id }, { wake: false, now });
  }

  /**
   * The card of a pending request as it was delivered, for another view of it (the web app's list
   * of approvals): its view, its buttons, and the reference a press from the web app carries (the
   * card's copy in the person's chat log — see `chatLogId`). Null until the card was delivered.
   */
  async delivered(request: ApprovalRequest): Promise<{ text: string; card: CardView | null; buttons: Button[]; pressRef: string } | null> {
    const { store } = this.deps;
    const outboxId = (await store.sentinel.listApprovalChoices(request.id)).find((c) => c.outboxId !== null)?.outboxId;
    const row = outboxId ? await store.outbox.getOutbound(outboxId) : null;
    const last = row?.delivered?.platformIds.at(-1);
    if (!row?.delivered || last === undefined) return null;
    return { text: row.text, card: parseCardView(row.card), buttons: row.buttons, pressRef: chatLogId("out", row.delivered.channel, last) };
  }

  /**
   * Tells the person once (per trip) that the breaker paused the task of `request`: by the task's
   * own denials or by theirs across tasks within the hour (core/approvals/denials.ts), and how to go on.
   */
  async tellPaused(request: ApprovalRequest, why: "task" | "person" = "task"): Promise<void> {
    if (request.taskId === null) return;
    const { store } = this.deps;
    const task = await store.tasks.getTask(request.taskId);
    const title = task && task.kind !== "turn" ? `“${task.title}”` : "what I was doing for your last message";
    const resume = task && task.kind !== "turn" ? " Say /resume when you want it to run again." : " Write to me if you want me to try something else.";
    const text =
      why === "task"
        ? `You denied ${MAX_DENIALS_PER_TASK} requests in ${title}, so I've paused it and stopped asking: nothing more will be asked or done for it.${resume}`
        : `You denied ${MAX_DENIALS_PER_PERSON} requests in the last hour, so I've paused ${title} and stopped asking you for anything that outside content (a page, an email, a webhook) prompts, for the rest of the hour. Your own requests still ask.${resume}`;
    await this.deps.outbound.queue(
      { personId: request.personId, deliveryKey: `approvals-paused:${request.taskId}:${request.decidedAt?.getTime() ?? 0}`, text },
      { wake: false, now: await this.deps.clock.now() },
    );
  }

  /** The card of `request`; pending (with these button tokens) or, with `tokens` null, for an edit. */
  private async view(request: ApprovalRequest, tokens: ReadonlyMap<ApprovalChoiceKind, string> | null): Promise<CardView> {
    const { store } = this.deps;
    const details = parseApprovalDetails(request);
    const now = await this.deps.clock.now();
    if (details === null) {
      return {
        v: 1,
        kind: "approval",
        approvalId: request.id,
        headline: [{ text: "Familiar asked to run " }, { text: request.summary, code: true }],
        fields: [],
        notices: [{ tone: "warning", text: "This request was made by an older version of Familiar and can no longer be approved; it expires on its own." }],
        scopes: [],
        buttons: [],
        status: null,
      };
    }
    const person = await store.persons.getPerson(request.personId);
    const task = request.taskId ? await store.tasks.getTask(request.taskId) : null;
    const buttonIds: Partial<Record<ApprovalChoiceKind, string>> = {};
    for (const [c, token] of tokens ?? []) buttonIds[c] = approvalButtonId(token);
    return buildApprovalCard(request.id, details, {
      person: { timeZone: person?.timeZone ?? "UTC", locale: person?.locale ?? "en-US" },
      buttonIds,
      taskTitle: task === null || task.kind === "turn" ? null : task.title,
      now: tokens !== null ? now : request.createdAt,
      expiresAt: request.expiresAt,
    });
  }
}
