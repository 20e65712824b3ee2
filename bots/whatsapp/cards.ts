import type { Button } from "../../core/channels/index.js";

/** WhatsApp polls take 2–12 options; a poll option is at most 100 characters. */
export const POLL_MIN_OPTIONS = 2;
export const POLL_MAX_OPTIONS = 12;
const POLL_OPTION_MAX = 100;
const POLL_QUESTION_MAX = 200;

/**
 * Open approval cards per chat, for mapping WhatsApp answers back to Button ids: a poll vote by the
 * poll's message id, a numbered reply ("2") by the chat's latest open card. Poll votes arrive as the
 * voter's whole current selection on every change (whatsapp-web.js `vote_update`, un-selecting
 * included), so the last selection per (poll, voter) is kept to find what was newly selected.
 * In memory: after a restart, votes on older polls and numbered replies to them are not mapped.
 */
export interface Card {
  pollId: string | null;
  /** Id that identifies the card in `messageRef` (the poll, or the last text part without a poll). */
  ref: string;
  address: string;
  buttons: Button[];
  open: boolean;
}

/** Most cards remembered (oldest forgotten first). */
const MAX_CARDS = 500;

export class CardBook {
  private readonly byRef = new Map<string, Card>();
  private readonly latestByChat = new Map<string, string>();
  private readonly selections = new Map<string, Set<number>>();

  /** Registers a card as the chat's latest open card. */
  add(card: Card): void {
    this.byRef.set(card.ref, card);
    this.latestByChat.set(card.address, card.ref);
    while (this.byRef.size > MAX_CARDS) {
      const oldest = this.byRef.keys().next().value as string;
      this.byRef.delete(oldest);
      for (const key of [...this.selections.keys()]) if (key.startsWith(`${oldest}|`)) this.selections.delete(key);
    }
  }

  /** The card with this poll or message id, open or not. */
  get(ref: string): Card | undefined {
    return this.byRef.get(ref);
  }

  /** Closes every card among `ids` (a card edited to show its outcome takes no numbered replies). */
  close(ids: readonly string[]): void {
    for (const id of ids) {
      const card = this.byRef.get(id);
      if (!card) continue;
      card.open = false;
      if (this.latestByChat.get(card.address) === card.ref) this.latestByChat.delete(card.address);
    }
  }

  /** The button a numbered reply (`"1"`…) picks on the chat's latest open card, if any. */
  numbered(address: string, text: string): { card: Card; button: Button } | null {
    const match = /^\s*(\d{1,2})\s*[.)]?\s*$/.exec(text);
    const ref = this.latestByChat.get(address);
    const card = ref === undefined ? undefined : this.byRef.get(ref);
    if (!match || !card?.open) return null;
    const button = card.buttons[Number(match[1]) - 1];
    return button ? { card, button } : null;
  }

  /** Option ids selected in this vote that the voter had not selected before (usually zero or one). */
  newlySelected(pollId: string, voter: string, selected: readonly number[]): number[] {
    const key = `${pollId}|${voter}`;
    const before = this.selections.get(key) ?? new Set<number>();
    this.selections.set(key, new Set(selected));
    return selected.filter((id) => !before.has(id));
  }
}

/** The numbered-reply fallback line: "Reply 1 for Approve once, 2 for Deny." */
export function numberedHint(buttons: readonly Button[]): string {
  return `Reply ${buttons.map((b, i) => `${i + 1} for ${b.label}`).join(", ")}.`;
}

/** The poll's question: the card's first rendered line without markers, ≤ 200 characters. */
export function pollQuestion(rendered: string): string {
  const first = rendered.split("\n").find((l) => l.trim()) ?? "";
  const plain = first.replace(/[*_~`]/g, "").trim() || "Choose one";
  return plain.length > POLL_QUESTION_MAX ? `${plain.slice(0, POLL_QUESTION_MAX - 1)}…` : plain;
}

/** Poll options must be distinct and ≤ 100 characters: cut long labels, number repeated ones. */
export function pollOptions(labels: string[]): string[] {
  const seen = new Set<string>();
  return labels.map((label, i) => {
    let option = label.length > POLL_OPTION_MAX ? `${label.slice(0, POLL_OPTION_MAX - 1)}…` : label;
    if (seen.has(option)) option = `${option.slice(0, POLL_OPTION_MAX - 5)} (${i + 1})`;
    seen.add(option);
    return option;
  });
}
