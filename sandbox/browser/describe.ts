/**
 * Turns what the page says about an element into the {@link ActionDescription} Sentinel judges:
 * following a link, submitting a form (its method, target and every field it would send), a click
 * that was seen sending data, a purchase on a checkout page, typing, choosing, downloading, uploading.
 *
 * Capabilities: `browser.browse` (open a page, follow a link, click, type, choose — reads a page and
 * hands it what the person typed), `browser.submit` (a form submission or a click that sends data),
 * `browser.purchase` (any submission or order button on a page that looks like a checkout — always
 * asks, once only, with amount, merchant and items), `browser.download`, `browser.upload`.
 *
 * Password fields are never shown: their value appears as `•••• (N characters)` unless it is a vault
 * reference; the digest holds a hash of it, so a different password is a different action.
 */
import { createHash } from "node:crypto";
import { actionDigest, type ActionDescription } from "../../core/tools/index.js";
import type { ObservedWrite } from "./network.js";
import type { CheckoutFacts, ElementFacts, FormField } from "./page-scripts.js";

/** How the tool shows values: known vault values become `{{secret:NAME}}` references. */
export type Scrub = (text: string) => string;

const SECRET_REF = /\{\{secret:[A-Za-z0-9_.-]{1,64}\}\}/;

/** A checkout page: card fields, or an order button together with a total. */
export function isCheckout(facts: CheckoutFacts): boolean {
  return facts.cardFields >= 2 || (facts.orderButtons.length > 0 && facts.totals.length > 0);
}

/** "Place order"-like labels. */
export function isOrderLabel(label: string): boolean {
  return /(place (your )?order|buy now|pay( now)?\b|complete (purchase|order|payment)|confirm (order|purchase|payment)|submit order|purchase)/i.test(label);
}

/** Where a page is, for cards: origin and path, no query (queries can be long and carry tokens). */
export function pageLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return url.slice(0, 200);
  }
}

function urlWithoutFragment(url: string): string {
  return url.replace(/#.*$/, "");
}

/** A value as the card shows it: passwords masked, secrets as references. */
export function shownValue(field: { value: string; type: string }, scrub: Scrub): string {
  const value = scrub(field.value);
  if (field.type === "password" && !SECRET_REF.test(value)) return value === "" ? "" : `•••• (${field.value.length} characters)`;
  return value;
}

/** The digest's view of a value: passwords hashed, secrets as references, everything else as shown. */
function digestValue(field: { value: string; type: string }, scrub: Scrub): string {
  const value = scrub(field.value);
  if (field.type === "password" && !SECRET_REF.test(value)) return `sha256:${createHash("sha256").update(field.value).digest("hex")}`;
  return value;
}

function purchaseOf(checkout: CheckoutFacts): NonNullable<ActionDescription["purchase"]> {
  const amount = checkout.totals.at(-1) ?? null;
  return { amount, merchant: checkout.merchant, items: checkout.items };
}

interface Base {
  tool: string;
  pageUrl: string;
  scrub: Scrub;
}

/** Opening a URL. */
export function describeOpen(base: Base, url: string): ActionDescription {
  return {
    capability: "browser.browse",
    access: "read",
    hardToUndo: false,
    method: "GET",
    destinations: [url],
    carriesData: false,
    summary: `Open ${pageLabel(url)} in the browser`,
    page: base.pageUrl === "" || base.pageUrl === "about:blank" ? null : pageLabel(base.pageUrl),
    fields: [],
    purchase: null,
    onceOnly: false,
    digest: actionDigest({ tool: base.tool, method: "GET", url: urlWithoutFragment(url) }),
  };
}

/** Clicking an element: a link, a form submission, a click seen sending data, a purchase, or a plain click. */
export function describeClick(base: Base & { ref: string }, facts: ElementFacts, checkout: CheckoutFacts, observed: ObservedWrite | undefined, passwords: readonly string[]): ActionDescription {
  const page = pageLabel(base.pageUrl);
  const label = facts.label ? `“${facts.label}”` : `the ${facts.role || facts.tag} ${base.ref}`;
  const onCheckout = isCheckout(checkout);
  const common = { page, hardToUndo: false, onceOnly: false, purchase: null };

  if (observed) return describeObservedClick(base, label, onCheckout ? checkout : null, observed, passwords);

  if (facts.submits && facts.form) {
    const form = facts.form;
    const purchase = onCheckout ? purchaseOf(checkout) : null;
    return {
      ...common,
      capability: purchase ? "browser.purchase" : "browser.submit",
      access: "write",
      hardToUndo: purchase !== null,
      onceOnly: purchase !== null,
      purchase,
      method: form.method,
      destinations: [form.action],
      carriesData: true,
      summary: `${purchase ? "Place an order: submit" : "Submit"} the form${form.label ? ` “${form.label}”` : ""} with ${label} — ${form.method} to ${pageLabel(form.action)}`,
      fields: form.fields.map((f) => ({ name: f.type === "hidden" ? `${f.name} (hidden)` : f.name, value: shownValue(f, base.scrub) })),
      digest: formDigest(base, form.method, form.action, form.fields),
    };
  }

  if (facts.href !== null && !facts.download && !/^javascript:/i.test(facts.href)) {
    return {
      ...common,
      capability: "browser.browse",
      access: "read",
      method: "GET",
      destinations: [facts.href],
      carriesData: false,
      summary: `Follow the link ${label} to ${pageLabel(facts.href)}`,
      fields: [],
      digest: actionDigest({ tool: base.tool, ref: base.ref, page: urlWithoutFragment(base.pageUrl), method: "GET", url: urlWithoutFragment(facts.href) }),
    };
  }

  if (onCheckout && isOrderLabel(facts.label)) {
    const purchase = purchaseOf(checkout);
    return {
      ...common,
      capability: "browser.purchase",
      access: "write",
      hardToUndo: true,
      onceOnly: true,
      purchase,
      method: "CLICK",
      destinations: [base.pageUrl],
      carriesData: true,
      summary: `Place an order: click ${label} on ${page}`,
      fields: [],
      digest: actionDigest({ tool: base.tool, ref: base.ref, page: urlWithoutFragment(base.pageUrl), method: "CLICK", purchase: { amount: purchase.amount, merchant: purchase.merchant, items: purchase.items } }),
    };
  }

  return {
    ...common,
    capability: "browser.browse",
    access: "read",
    method: "CLICK",
    destinations: [base.pageUrl],
    carriesData: false,
    summary: `Click ${label} on ${page}`,
    fields: [],
    digest: actionDigest({ tool: base.tool, ref: base.ref, page: urlWithoutFragment(base.pageUrl), method: "CLICK", label: facts.label }),
  };
}

/** A click seen sending data before (and stopped): asked about with exactly what it sent. */
function describeObservedClick(base: Base & { ref: string }, label: string, checkout: CheckoutFacts | null, observed: ObservedWrite, passwords: readonly string[]): ActionDescription {
  const page = pageLabel(base.pageUrl);
  const common = { page, hardToUndo: false, onceOnly: false, purchase: null };
  // The click was seen sending this before and was stopped: ask with exactly what it sent.
  const fields = (observed.fields ?? [{ name: "(body)", value: `${observed.bytes} bytes of ${observed.contentType || "data"}` }]).map((f) => ({
    name: f.name,
    value: passwords.includes(f.value) && f.value !== "" ? `•••• (${f.value.length} characters)` : base.scrub(f.value),
  }));
  const purchase = checkout ? purchaseOf(checkout) : null;
  return {
    ...common,
    capability: purchase ? "browser.purchase" : "browser.submit",
    access: "write",
    hardToUndo: purchase !== null,
    onceOnly: purchase !== null,
    purchase,
    method: observed.method,
    destinations: [observed.url],
    carriesData: true,
    summary: `${purchase ? "Place an order: click" : "Click"} ${label}, which sends ${observed.method} to ${pageLabel(observed.url)}`,
    fields,
    digest: actionDigest({
      tool: base.tool,
      ref: base.ref,
      page: urlWithoutFragment(base.pageUrl),
      method: observed.method,
      url: observed.url,
      fields: observed.fields ? observed.fields.map((f) => [f.name, passwords.includes(f.value) ? `sha256:${sha(f.value)}` : base.scrub(f.value)]) : null,
      body: observed.fields ? null : observed.bodyDigest,
    }),
  };

}

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function formDigest(base: Base & { ref: string }, method: string, action: string, fields: readonly FormField[]): string {
  return actionDigest({
    tool: base.tool,
    ref: base.ref,
    page: urlWithoutFragment(base.pageUrl),
    method,
    url: urlWithoutFragment(action),
    fields: fields.map((f) => [f.name, f.type, digestValue(f, base.scrub)]),
  });
}

/** Typing into a field or choosing options: hands the text to the page's origin. */
export function describeFill(base: Base & { ref: string }, facts: ElementFacts, kind: "TYPE" | "SELECT", value: string): ActionDescription {
  const page = pageLabel(base.pageUrl);
  const label = facts.label ? `“${facts.label}”` : `the field ${base.ref}`;
  const shown = shownValue({ value, type: facts.inputType }, base.scrub);
  return {
    capability: "browser.browse",
    access: "read",
    hardToUndo: false,
    method: kind,
    destinations: [base.pageUrl],
    carriesData: value.length > 0,
    summary: kind === "TYPE" ? `Type into ${label} on ${page}` : `Choose in ${label} on ${page}`,
    page,
    fields: [{ name: facts.label || base.ref, value: shown }],
    purchase: null,
    onceOnly: false,
    digest: actionDigest({ tool: base.tool, ref: base.ref, page: urlWithoutFragment(base.pageUrl), method: kind, value: digestValue({ value, type: facts.inputType }, base.scrub) }),
  };
}

/** Downloading from a link or URL into the workspace. */
export function describeDownload(base: Base & { ref: string | null }, url: string | null, label: string): ActionDescription {
  const from = url ?? base.pageUrl;
  return {
    capability: "browser.download",
    access: "write",
    hardToUndo: false,
    method: "DOWNLOAD",
    destinations: [from],
    carriesData: false,
    summary: `Download ${label ? `“${label}” ` : ""}from ${pageLabel(from)} into your workspace (downloads/)`,
    page: base.pageUrl === "" || base.pageUrl === "about:blank" ? null : pageLabel(base.pageUrl),
    fields: [],
    purchase: null,
    onceOnly: false,
    digest: actionDigest({ tool: base.tool, ref: base.ref, page: urlWithoutFragment(base.pageUrl), url: url === null ? null : urlWithoutFragment(url) }),
  };
}

/** Attaching a workspace file to a file field (the page may send it at once). */
export function describeUpload(base: Base & { ref: string }, facts: ElementFacts, path: string, bytes: number, contentDigest: string): ActionDescription {
  const page = pageLabel(base.pageUrl);
  return {
    capability: "browser.upload",
    access: "write",
    hardToUndo: false,
    method: "UPLOAD",
    destinations: [base.pageUrl],
    carriesData: true,
    summary: `Attach your file ${path} (${bytes} bytes) to ${facts.label ? `“${facts.label}”` : `the field ${base.ref}`} on ${page}`,
    page,
    fields: [{ name: facts.label || base.ref, value: `${path} (${bytes} bytes)` }],
    purchase: null,
    onceOnly: false,
    digest: actionDigest({ tool: base.tool, ref: base.ref, page: urlWithoutFragment(base.pageUrl), path, content: contentDigest }),
  };
}
