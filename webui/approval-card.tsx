/**
 * An approval card drawn from Sentinel's structured view model (core/channels/card-view.ts, sent
 * by the server with the chat item as `card`): the sentence, warnings, each labelled fact (request
 * content verbatim and wrapped, never widening the page), what the wider choices cover, the complete
 * payload behind a "Show all" toggle when the card could not show it, and the decision once made.
 * Every string is rendered as text, never as HTML.
 */

/** Sentinel's card view, as the chat API sends it. */
export interface ApprovalCardView {
  headline: { text: string; strong?: boolean; code?: boolean }[];
  fields: { label: string; value: string; format: "text" | "code" | "block"; hidden: number }[];
  notices: { tone: "warning" | "info"; text: string }[];
  scopes: string[];
  buttons: { id: string; label: string; style: "primary" | "secondary" | "danger" }[];
  status: { outcome: string; text: string } | null;
  full?: { label: string; text: string };
}

export function ApprovalCard({ card }: { card: ApprovalCardView }) {
  return (
    <div class={`approval-card${card.status ? ` decided ${card.status.outcome}` : ""}`} role="group" aria-label="Approval request">
      <p class="ac-headline">
        <span aria-hidden="true">🔐 </span>
        {card.headline.map((p, i) => (p.code ? <code key={i}>{p.text}</code> : p.strong ? <strong key={i}>{p.text}</strong> : <span key={i}>{p.text}</span>))}
      </p>
      {card.notices.length > 0 && (
        <ul class="ac-notices">
          {card.notices.map((n, i) => (
            <li key={i} class={n.tone}>
              {n.tone === "warning" ? "⚠️ " : "ℹ️ "}
              {n.text}
            </li>
          ))}
        </ul>
      )}
      <dl class="ac-fields">
        {card.fields.map((f, i) => (
          <div key={i} class="ac-field">
            <dt>{f.label}</dt>
            <dd>
              {f.format === "block" ? <pre>{f.value}</pre> : f.format === "code" ? <code>{f.value}</code> : f.value}
              {f.hidden > 0 && <span class="ac-hidden">{f.hidden.toLocaleString("en-US")} more characters not shown</span>}
            </dd>
          </div>
        ))}
      </dl>
      {card.full && (
        <details class="ac-full">
          <summary>Show all: {card.full.label}</summary>
          <pre>{card.full.text}</pre>
        </details>
      )}
      {!card.status && card.scopes.length > 0 && (
        <ul class="ac-scopes">
          {card.scopes.map((s, i) => (
            <li key={i}>{s}</li>
          ))}
        </ul>
      )}
      {card.status && <p class="ac-status">{card.status.text}</p>}
    </div>
  );
}
