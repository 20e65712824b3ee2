/**
 * The web chat's approval card renderer (served as `/local/card.js`, plain ES2020 for the browser).
 * It draws Sentinel's structured card view model (core/channels/card-view.ts) — headline, notices,
 * labelled fields, what the wider choices cover, the complete payload behind a "Show all" toggle
 * when the card could not show it, and the decision once made. Every string is set as text
 * (`textContent`), never as HTML; long values wrap instead of widening the page, so the card fits
 * a 360-px-wide screen without horizontal scrolling. Exposes `window.FamiliarCard.render(card)`.
 */
export const cardScript = String.raw`"use strict";
(function () {
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function headline(card) {
    var p = el("p", "card-headline");
    p.append(el("span", "card-icon", "🔐 "));
    card.headline.forEach(function (part) {
      p.append(el(part.code ? "code" : part.strong ? "strong" : "span", "", part.text));
    });
    return p;
  }

  function field(f) {
    var wrap = el("div", "card-field");
    var label = el("dt", "", f.label);
    var value = el("dd");
    if (f.format === "block") value.append(el("pre", "", f.value));
    else if (f.format === "code") value.append(el("code", "", f.value));
    else value.textContent = f.value;
    if (f.hidden > 0) value.append(el("span", "card-hidden", f.hidden.toLocaleString("en-US") + " more characters not shown"));
    wrap.append(label, value);
    return wrap;
  }

  function render(card) {
    var root = el("div", "card" + (card.status ? " decided " + card.status.outcome : ""));
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", "Approval request");
    root.append(headline(card));
    if (card.notices.length) {
      var notices = el("ul", "card-notices");
      card.notices.forEach(function (n) { notices.append(el("li", n.tone, (n.tone === "warning" ? "⚠️ " : "ℹ️ ") + n.text)); });
      root.append(notices);
    }
    var fields = el("dl", "card-fields");
    card.fields.forEach(function (f) { fields.append(field(f)); });
    root.append(fields);
    if (card.full) {
      var details = el("details", "card-full");
      details.append(el("summary", "", "Show all: " + card.full.label), el("pre", "", card.full.text));
      root.append(details);
    }
    if (!card.status && card.scopes.length) {
      var scopes = el("ul", "card-scopes");
      card.scopes.forEach(function (s) { scopes.append(el("li", "", s)); });
      root.append(scopes);
    }
    if (card.status) root.append(el("p", "card-status", card.status.text));
    return root;
  }

  window.FamiliarCard = { render: render };
})();
`;

/** Styles of the card (appended to the page's stylesheet). */
export const cardCss = `.msg.card-msg{max-width:100%;width:100%}
.card{display:flex;flex-direction:column;gap:8px;min-width:0;max-width:100%;overflow-wrap:anywhere}
.card-headline{margin:0;font-size:15px}
.card code,.card pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em;overflow-wrap:anywhere;word-break:break-word}
.card code{background:rgba(127,127,127,.14);padding:1px 4px;border-radius:4px}
.card pre{margin:0;white-space:pre-wrap;background:rgba(127,127,127,.12);padding:8px;border-radius:8px;max-height:45vh;overflow-y:auto;overflow-x:hidden}
.card .card-notices{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:4px}
.card-notices li{font-size:13px;padding:6px 8px;border-radius:8px;background:rgba(127,127,127,.1)}
.card-notices li.warning{background:rgba(214,120,0,.14)}
.card-fields{margin:0;display:flex;flex-direction:column;gap:6px}
.card-field{min-width:0}
.card-field dt{font-size:12px;font-weight:600;color:var(--muted)}
.card-field dd{margin:2px 0 0;min-width:0}
.card-hidden{display:block;font-size:12px;color:var(--danger)}
.card-full summary{cursor:pointer;color:var(--accent);font-size:13px}
.card-full pre{margin-top:6px}
.card .card-scopes{margin:0;padding-left:1.2em;font-size:13px;color:var(--muted)}
.card-status{margin:0;font-weight:600}
.card-msg .buttons button{white-space:normal;text-align:left}
.card-msg .buttons button.danger{border-color:var(--danger);color:var(--danger)}
.card-msg .buttons button.primary{background:var(--accent);color:var(--panel)}
`;
