/**
 * Functions evaluated inside the page (plain ES2020 strings, so the Node build needs no DOM types).
 * What they return is *claims of an untrusted page*: the page's own scripts can patch built-ins and
 * lie. They serve the card and the model; what actually leaves the browser is checked again at the
 * network layer against the approved action (`sandbox/browser/network.ts`).
 */
import { z } from "zod";

/** One field a form would send. `type` is the input type (`password`, `hidden`, `file`, …). */
export const formFieldSchema = z.object({ name: z.string(), value: z.string(), type: z.string() });
export type FormField = z.infer<typeof formFieldSchema>;

/** What clicking or filling an element would do, as the page describes it. */
export const elementFactsSchema = z.object({
  tag: z.string(),
  role: z.string(),
  label: z.string(),
  inputType: z.string(),
  autocomplete: z.string(),
  disabled: z.boolean(),
  /** A link's absolute URL (the element or its closest `a[href]`). */
  href: z.string().nullable(),
  /** The link has a `download` attribute. */
  download: z.boolean(),
  /** The element submits its form when clicked. */
  submits: z.boolean(),
  /** The form that a click would submit or that a field belongs to. */
  form: z
    .object({
      method: z.string(),
      action: z.string(),
      enctype: z.string(),
      label: z.string(),
      fields: z.array(formFieldSchema),
    })
    .nullable(),
});
export type ElementFacts = z.infer<typeof elementFactsSchema>;

/** `(element) => ElementFacts` */
export const ELEMENT_FACTS = String.raw`(el) => {
  const text = (s) => String(s || "").replace(/\s+/g, " ").trim().slice(0, 200);
  const labelOf = (e) => {
    if (!e) return "";
    const aria = e.getAttribute && (e.getAttribute("aria-label") || "");
    if (aria) return text(aria);
    if (e.labels && e.labels.length) return text(e.labels[0].innerText);
    if (e.tagName === "INPUT" && (e.type === "submit" || e.type === "button")) return text(e.value);
    return text(e.innerText || e.getAttribute && (e.getAttribute("placeholder") || e.getAttribute("name") || e.getAttribute("title")) || "");
  };
  const tag = el.tagName.toLowerCase();
  const link = el.closest ? el.closest("a[href]") : null;
  const inputType = tag === "input" ? String(el.type || "text").toLowerCase() : tag === "button" ? String(el.type || "submit").toLowerCase() : "";
  const form = el.form || (el.closest ? el.closest("form") : null);
  const submits = !!form && ((tag === "button" && inputType === "submit") || (tag === "input" && (inputType === "submit" || inputType === "image")));
  let formFacts = null;
  if (form) {
    const fields = [];
    let data;
    try { data = submits ? new FormData(form, el) : new FormData(form); } catch (e) { data = new FormData(form); }
    const typeOf = (name) => {
      const c = form.elements.namedItem(name);
      const one = c && c.length !== undefined && !c.tagName ? c[0] : c;
      return one ? String(one.type || one.tagName || "").toLowerCase() : "text";
    };
    for (const [name, value] of data.entries()) {
      if (typeof value === "string") fields.push({ name: name, value: value, type: typeOf(name) });
      else fields.push({ name: name, value: value && value.name ? value.name + " (" + value.size + " bytes)" : "(no file)", type: "file" });
    }
    const method = String((submits && el.getAttribute("formmethod")) || form.getAttribute("method") || "get").toUpperCase();
    const action = String((submits && el.hasAttribute("formaction") && el.formAction) || form.action || location.href);
    const enctype = String((submits && el.getAttribute("formenctype")) || form.enctype || "application/x-www-form-urlencoded");
    formFacts = { method: method === "POST" ? "POST" : method === "DIALOG" ? "DIALOG" : "GET", action: action, enctype: enctype, label: text(form.getAttribute("aria-label") || form.getAttribute("name") || form.id || ""), fields: fields };
  }
  return {
    tag: tag,
    role: String(el.getAttribute("role") || ""),
    label: labelOf(el),
    inputType: inputType,
    autocomplete: String(el.getAttribute("autocomplete") || "").toLowerCase(),
    disabled: !!el.disabled,
    href: link ? String(link.href) : null,
    download: !!(link && link.hasAttribute("download")),
    submits: submits,
    form: formFacts,
  };
}`;

/** Signals that a page is a checkout or payment page, and what it says the purchase is. */
export const checkoutFactsSchema = z.object({
  cardFields: z.number().int(),
  orderButtons: z.array(z.string()),
  totals: z.array(z.string()),
  merchant: z.string(),
  items: z.array(z.string()),
});
export type CheckoutFacts = z.infer<typeof checkoutFactsSchema>;

/** `() => CheckoutFacts` — heuristics: card fields, "place order"-like buttons, totals, line items. */
export const CHECKOUT_FACTS = String.raw`() => {
  const text = (s) => String(s || "").replace(/\s+/g, " ").trim();
  const card = /(cc-?(number|num|csc|exp)|card.?(number|num|no)|cardnumber|cvc|cvv|security.?code|expir)/i;
  let cardFields = 0;
  for (const input of Array.from(document.querySelectorAll("input, select, iframe"))) {
    const hay = [input.getAttribute("autocomplete"), input.getAttribute("name"), input.id, input.getAttribute("placeholder"), input.getAttribute("aria-label"), input.getAttribute("title")].join(" ");
    if (card.test(hay)) cardFields++;
  }
  const order = /(place (your )?order|buy now|pay( now)?\b|complete (purchase|order|payment)|confirm (order|purchase|payment)|submit order|checkout|purchase)/i;
  const orderButtons = [];
  for (const b of Array.from(document.querySelectorAll("button, input[type=submit], [role=button], a"))) {
    const label = text(b.getAttribute("aria-label") || b.innerText || b.value);
    if (label && label.length < 60 && order.test(label)) orderButtons.push(label);
  }
  const money = /(?:[$€£¥₹]|USD|EUR|GBP|CHF|JPY)\s?\d[\d,.' ]*\d|\d[\d,.' ]*\d\s?(?:[$€£¥₹]|USD|EUR|GBP|CHF|JPY)/;
  const totals = [];
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_ELEMENT);
  for (let n = walker.currentNode; n; n = walker.nextNode()) {
    if (n.children && n.children.length > 3) continue;
    const t = text(n.innerText);
    if (t.length > 0 && t.length < 80 && /(order total|grand total|total|amount due|to pay)/i.test(t) && money.test(t)) totals.push(t);
    if (totals.length > 10) break;
  }
  const items = [];
  for (const n of Array.from(document.querySelectorAll("[class*=line-item i], [class*=cart-item i], [class*=order-item i], [data-item], [itemprop=name]"))) {
    const t = text(n.innerText);
    if (t && t.length < 160 && !items.includes(t)) items.push(t);
    if (items.length >= 20) break;
  }
  const site = document.querySelector("meta[property='og:site_name']");
  return { cardFields: cardFields, orderButtons: orderButtons.slice(0, 10), totals: totals.slice(-5), merchant: text((site && site.getAttribute("content")) || location.hostname), items: items };
}`;

/** `() => { title, url, text }` — the page's readable text (no form values: innerText never holds them). */
export const READABLE_TEXT = String.raw`() => {
  const root = document.querySelector("main, [role=main], article") || document.body || document.documentElement;
  return { title: document.title || "", url: location.href, text: String(root ? root.innerText : "").replace(/\n{3,}/g, "\n\n").trim() };
}`;
